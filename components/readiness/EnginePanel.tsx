"use client";
/**
 * The unit page's engine section: what the engine under the unit is (vLLM …), whether it serves,
 * its current stage and progress, the models, the last probe of its own endpoint (URL, answer,
 * when), the last log line the agent recognised, the stage timings it logged and the metrics the
 * agent scrapes. Not shown for a unit with no engine recognised (readiness unknown, no engine).
 */
import { useNow } from "@/components/live/LiveProvider";
import { formatDuration, formatTime } from "@/server/contract/format";
import type { EngineMetrics, Readiness } from "@/server/contract/readiness";
import { JOURNAL_HIDDEN } from "@/server/contract/roleViews";
import { engineMetricRows, modelWithVram, probeText, timingsText } from "./engineFacts";
import { ReadinessLine } from "./ReadinessLine";
import { engineName, progressText } from "./readinessText";

function Row({ name, children, testId }: { name: string; children: React.ReactNode; testId?: string }) {
  return (
    <div className="contents">
      <dt className="font-medium text-zinc-600 dark:text-zinc-400">{name}</dt>
      <dd className="min-w-0 break-words text-xs sm:text-sm" data-testid={testId}>
        {children}
      </dd>
    </div>
  );
}

export function EnginePanel({ readiness: r, metrics }: { readiness: Readiness | undefined; metrics: EngineMetrics | null | undefined }) {
  const now = useNow();
  if (!r || (r.state === "unknown" && !r.engine)) return null;
  const stageSince = r.stageSinceMs ?? null;
  const timings = timingsText(r.timings);
  const metricRows = engineMetricRows(metrics);
  return (
    <section aria-labelledby="engine-heading" className="rounded-lg border border-zinc-200 dark:border-zinc-800" data-testid="engine-panel">
      <h2 id="engine-heading" className="border-b border-zinc-200 px-4 py-2 text-sm font-semibold dark:border-zinc-800">
        Engine: {engineName(r.engine)}
      </h2>
      <dl className="grid grid-cols-1 gap-x-4 gap-y-2 px-4 py-3 text-sm sm:grid-cols-[10rem_1fr]">
        <Row name="Serving">
          {r.state === "unknown" ? (
            <span className="text-zinc-500 dark:text-zinc-400">unknown (the unit is not running)</span>
          ) : (
            <ReadinessLine readiness={r} nowMs={now} />
          )}
        </Row>
        {r.stage && (
          <Row name="Stage" testId="engine-stage">
            {r.stage}
            {r.progress && ` ${progressText(r.progress)}`}
            {stageSince != null && ` · for ${formatDuration(now - stageSince)}`}
          </Row>
        )}
        {r.reason && <Row name="Reason">{r.reason}</Row>}
        {r.warning && <Row name="Warning">{r.warning}</Row>}
        <Row name="Models">
          {r.models.length > 0 ? (
            r.models.map((m) => modelWithVram(m, r.vramMiB)).join(", ")
          ) : (
            <span className="text-zinc-500 dark:text-zinc-400">none reported</span>
          )}
        </Row>
        <Row name="Probe" testId="engine-probe">
          {r.probe ? (
            <>
              <code className="break-all">{r.probe.url}</code> · {probeText(r.probe, now)}
            </>
          ) : (
            <span className="text-zinc-500 dark:text-zinc-400">not probed yet</span>
          )}
        </Row>
        {r.line && (
          <Row name="Last line it logged" testId="engine-line">
            <span className="text-zinc-500 dark:text-zinc-400">{formatTime(r.line.atMs)} </span>
            <code className="whitespace-pre-wrap break-all">{r.line.text}</code>
          </Row>
        )}
        {!r.line && r.lineHidden && (
          <Row name="Last line it logged" testId="engine-line-hidden">
            <span className="text-zinc-600 dark:text-zinc-400">{JOURNAL_HIDDEN}</span>
          </Row>
        )}
        {timings && <Row name="Stage timings">{timings}</Row>}
        {metricRows.length > 0 ? (
          metricRows.map(([k, v]) => (
            <Row key={k} name={k} testId="engine-metric">
              <span className="tabular-nums">{v}</span>
            </Row>
          ))
        ) : (
          <Row name="Metrics">
            <span className="text-zinc-500 dark:text-zinc-400">none scraped</span>
          </Row>
        )}
      </dl>
    </section>
  );
}
