"use client";
/**
 * "Why won't it start?": the agent's diagnosis of the unit, recomputed as its facts change.
 * Polls faster while something is wrong, and refetches at once on every state change. While a
 * GPU-aware operation runs for the unit, the card speaks of the operation instead (what it waits
 * for, since when, by whom) and offers no action; while the engine loads, its progress comes from
 * the live stream, in the header's words, not from the last diagnosis (which lags it).
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useState } from "react";
import { formatDuration } from "@/server/contract/format";
import { hostUnitHref } from "@/components/fleet/links";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { OperationDiagnosis } from "@/components/operations/OperationDiagnosis";
import { readinessText } from "@/components/readiness/readinessText";
import { isFinalOperationStep, type Operation } from "@/server/contract/operations";
import { useTRPC } from "@/components/trpc";
import type { Diagnosis, DiagnosisActionKind } from "@/server/contract/diagnosis";

/** The next steps the unit page can take itself (open-unit is a link). */
export type DiagnosisAction = Exclude<DiagnosisActionKind, "open-unit">;

const ACTION_BUTTON: Record<DiagnosisAction, (unit: string) => string> = {
  "reset-failed": (u) => `Reset failed ${u}`,
  restart: (u) => `Restart ${u}`,
  start: (u) => `Start ${u}`,
  stop: (u) => `Stop ${u}`,
  "stop-loop": (u) => `Stop the loop of ${u}`,
  "restart-when-free": (u) => `Restart ${u} when its GPUs are free`,
};

const TONE: Record<Diagnosis["severity"], string> = {
  ok: "border-emerald-300 bg-emerald-50 text-emerald-950 dark:border-emerald-800 dark:bg-emerald-950/60 dark:text-emerald-100",
  info: "border-sky-300 bg-sky-50 text-sky-950 dark:border-sky-800 dark:bg-sky-950/60 dark:text-sky-100",
  warning: "border-amber-400 bg-amber-50 text-amber-950 dark:border-amber-700 dark:bg-amber-950/60 dark:text-amber-100",
  critical: "border-red-400 bg-red-50 text-red-950 dark:border-red-800 dark:bg-red-950/60 dark:text-red-100",
};
const SEVERITY_WORD: Record<Diagnosis["severity"], string> = { ok: "Healthy", info: "Note", warning: "Attention", critical: "Problem" };

/** The agent's diagnosis of a unit; `enabled` false while its host is not connected (the agent would not answer). */
export function useDiagnosis(host: string, name: string, enabled = true) {
  const trpc = useTRPC();
  const live = useLive();
  const u = live.host(host)?.units.get(name);
  const query = useQuery(
    trpc.units.diagnose.queryOptions(
      { host, name },
      {
        enabled,
        refetchInterval: (q) => (q.state.data?.severity === "ok" ? 10_000 : 1_000),
        staleTime: 0,
        retry: false,
      },
    ),
  );
  const { refetch } = query;
  useEffect(() => {
    if (enabled) void refetch();
  }, [u?.activeState, u?.subState, u?.job?.id, u?.nRestarts, u?.readiness?.state, u?.readiness?.stage, enabled, refetch]);
  return query;
}

export function DiagnosisCard({
  host,
  name,
  onAction,
  operation = null,
}: {
  host: string;
  name: string;
  onAction: (action: DiagnosisAction) => void;
  /** the unit's latest GPU-aware operation (live); while it runs the card speaks of it */
  operation?: Operation | null;
}) {
  const hostLive = useLive().host(host);
  const hostState = hostLive?.summary?.state;
  const readiness = hostLive?.units.get(name)?.readiness;
  const now = useNow(1000);
  const { data, error, isLoading } = useDiagnosis(host, name, hostState === "connected");
  const [open, setOpen] = useState(false);
  if (operation && !isFinalOperationStep(operation.step) && hostState === "connected")
    return <OperationDiagnosis operation={operation} readiness={readiness} nowMs={now} />;
  // only the agent can diagnose: an old answer would pass for a current one
  if (hostState !== undefined && hostState !== "connected")
    return <p className="text-sm text-zinc-500 dark:text-zinc-400">No diagnosis while {host} is not connected.</p>;
  // the height of a short card while the answer comes: the page below does not jump (and the GPU
  // chart at a laptop's fold is not pulled into view for a moment, bench/route-js.ts)
  if (isLoading || hostState === undefined)
    return (
      <p role="status" className="min-h-[6.75rem] rounded-lg border border-zinc-200 p-4 text-sm text-zinc-500 dark:border-zinc-800 dark:text-zinc-400">
        Diagnosing…
      </p>
    );
  if (error || !data) return <p className="text-sm text-zinc-500 dark:text-zinc-400">Diagnosis unavailable{error ? `: ${error.message}` : ""}.</p>;
  const step = data.nextStep;
  const action = step?.action;
  // the live stream's progress ("loading weights 37/119 · … · ready in about 3 min"), as in the header
  const liveLoading = data.code === "engine-loading" && readiness?.state === "loading" ? readinessText(readiness, now) : null;
  const headline = liveLoading ? `Not serving yet: ${liveLoading.text}.` : data.headline;
  return (
    <section
      aria-labelledby="diagnosis-heading"
      className={`rounded-lg border p-4 ${TONE[data.severity]}`}
      data-testid="diagnosis"
      data-code={data.code}
      data-severity={data.severity}
    >
      <h2 id="diagnosis-heading" className="text-xs font-semibold uppercase tracking-wide opacity-80">
        {SEVERITY_WORD[data.severity]} · why is it in this state?
      </h2>
      <p className="mt-1 text-base font-medium leading-snug" data-testid="diagnosis-headline">
        {headline}
      </p>
      {data.etaMs !== undefined && data.severity !== "ok" && <p className="mt-1 text-sm opacity-90">Expected in about {formatDuration(data.etaMs)}.</p>}
      {step && (
        <div className="mt-2 flex flex-wrap items-center gap-3 text-sm">
          <span>
            <b>Next step:</b> {step.text}
          </span>
          {action?.kind === "open-unit" && (
            <Link href={hostUnitHref(host, action.unit)} className="rounded-md border border-current px-3 py-1.5 font-semibold">
              Open {action.unit}
            </Link>
          )}
          {action && action.kind !== "open-unit" && action.unit === name && (
            <button
              type="button"
              onClick={() => onAction(action.kind as DiagnosisAction)}
              className="min-h-10 rounded-md border border-current px-3 py-1.5 font-semibold"
            >
              {ACTION_BUTTON[action.kind](name)}
            </button>
          )}
        </div>
      )}
      {data.evidence.length > 0 && (
        <div className="mt-2">
          <button type="button" aria-expanded={open} onClick={() => setOpen(!open)} className="text-sm underline underline-offset-2">
            {open ? "Hide" : "Show"} evidence ({data.evidence.length})
          </button>
          {open && (
            <dl className="mt-2 grid grid-cols-1 gap-x-4 gap-y-1 text-xs sm:grid-cols-[12rem_1fr]">
              {data.evidence.map((e, i) => (
                <div key={i} className="contents">
                  <dt className="font-medium opacity-80">
                    {e.label} <span className="font-normal opacity-70">({e.source})</span>
                  </dt>
                  <dd className="break-words font-mono">{e.value}</dd>
                </div>
              ))}
            </dl>
          )}
        </div>
      )}
    </section>
  );
}

/** One line for the overview: the headline of a unit that is not healthy. */
export function DiagnosisReason({ host, name, enabled }: { host: string; name: string; enabled: boolean }) {
  const { data } = useDiagnosis(host, name, enabled);
  if (!enabled || !data || data.severity === "ok") return null;
  return (
    <span className="block text-xs text-zinc-700 dark:text-zinc-300" data-testid="diagnosis-reason">
      {data.headline}
    </span>
  );
}
