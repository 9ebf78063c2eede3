"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useMemo, useState, type ReactNode } from "react";
import { ConfirmDialog } from "@/components/ConfirmDialog";
import { DiagnosisCard } from "@/components/DiagnosisCard";
import { formatDuration, formatMiB } from "@/server/contract/format";
import { JournalTail } from "@/components/JournalTail";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { StateBadge, stateLabel } from "@/components/StateBadge";
import { useTRPC } from "@/components/trpc";
import { gpuList, unitGpuUse } from "@/components/unitGpu";
import { UnitHistory } from "@/components/UnitHistory";
import type { ExecCommand, UnitAction, UnitDetail, UnitSummary } from "@/server/contract/types";
import { formatCmdline, formatUsecSetting } from "@/server/contract/format";

type Pending = {
  action: UnitAction;
  sent: boolean;
  jobId: number | null;
  atMs: number;
  error?: string;
  /** the server wants an explicit "yes, again" (someone just did the same to this unit) */
  needsConfirmation?: { reason: string };
};

/** wall clock for event handlers (kept out of render) */
const clock = () => Date.now();

const ACTION_LABEL: Record<UnitAction, string> = {
  start: "Start",
  stop: "Stop",
  restart: "Restart",
  "reset-failed": "Reset failed",
  kill: "Kill (SIGKILL)",
};

function applicable(action: UnitAction, u: UnitSummary): boolean {
  switch (action) {
    case "start":
      return u.activeState === "inactive" || u.activeState === "failed";
    case "stop":
      return u.activeState !== "inactive" && u.activeState !== "failed";
    case "restart":
      return true;
    case "reset-failed":
      return u.activeState === "failed" || u.result !== "success" || u.nRestarts > 0;
    case "kill":
      return u.mainPid > 0;
  }
}

export function UnitView({ name }: { name: string }) {
  const trpc = useTRPC();
  const live = useLive();
  const now = useNow();
  const summary = live.units.get(name);
  const detailQuery = useQuery(trpc.units.get.queryOptions({ name }, { retry: false }));
  const { refetch } = detailQuery;
  // systemd's detail (PIDs, control process) changes with every state change: refetch then.
  useEffect(() => {
    void refetch();
  }, [summary?.activeState, summary?.subState, summary?.mainPid, summary?.controlPid, summary?.job?.id, refetch]);

  const detail = detailQuery.data?.detail;
  const permissions = detailQuery.data?.permissions;
  const unit: UnitSummary | undefined = summary ?? detail;
  const [confirm, setConfirm] = useState<UnitAction | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);

  const mutationOptions = {
    start: trpc.units.start.mutationOptions(),
    stop: trpc.units.stop.mutationOptions(),
    restart: trpc.units.restart.mutationOptions(),
    "reset-failed": trpc.units.resetFailed.mutationOptions(),
    kill: trpc.units.kill.mutationOptions(),
  };
  const start = useMutation(mutationOptions.start);
  const stop = useMutation(mutationOptions.stop);
  const restart = useMutation(mutationOptions.restart);
  const resetFailed = useMutation(mutationOptions["reset-failed"]);
  const kill = useMutation(mutationOptions.kill);
  const mutations = { start, stop, restart, "reset-failed": resetFailed, kill };

  const run = (action: UnitAction, reason: string, confirmed = false) => {
    setConfirm(null);
    setPending({ action, sent: false, jobId: null, atMs: clock() });
    mutations[action].mutate(
      { name, reason: reason || undefined, ...(confirmed ? { confirmed: true } : {}) },
      {
        onSuccess: (r) => setPending({ action, sent: true, jobId: r.jobId, atMs: clock() }),
        onError: (err) =>
          setPending({
            action,
            sent: true,
            jobId: null,
            atMs: clock(),
            error: err.message,
            needsConfirmation: err.data?.code === "CONFLICT" ? { reason } : undefined,
          }),
      },
    );
  };
  const recent = detailQuery.data?.recentAction ?? null;
  const recentApplies = (a: UnitAction | null) => recent !== null && (a === "restart" || a === "stop");

  const gpu = unitGpuUse(live.gpu, name);

  if (detailQuery.error && !unit) {
    return (
      <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200">
        <p className="font-semibold">Cannot show {name}</p>
        <p className="text-sm">{detailQuery.error.message}</p>
        <Link href="/" className="mt-2 inline-block text-sm underline">
          Back to all units
        </Link>
      </div>
    );
  }
  if (!unit) return <p className="text-sm text-zinc-500">Loading {name}…</p>;

  const since = unit.stateChangeUsec ? now - unit.stateChangeUsec / 1000 : NaN;
  const uptime = unit.activeState === "active" && detail?.timestamps.activeEnterUsec ? now - detail.timestamps.activeEnterUsec / 1000 : null;
  const visibleActions = (Object.keys(ACTION_LABEL) as UnitAction[]).filter((a) => permissions?.[a]?.allowed && applicable(a, unit));
  const refused = (Object.keys(ACTION_LABEL) as UnitAction[]).filter((a) => permissions && !permissions[a].allowed);

  return (
    <div className="space-y-5">
      <header className="space-y-3">
        <nav className="text-sm">
          <Link href="/" className="text-blue-700 underline-offset-2 hover:underline dark:text-blue-400">
            ← All units
          </Link>
        </nav>
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="min-w-0 break-all font-mono text-xl font-semibold">{name}</h1>
          <StateBadge active={unit.activeState} sub={unit.subState} size="lg" />
        </div>
        <p className="text-sm text-zinc-600 dark:text-zinc-400">
          {unit.description} ·{" "}
          <span className="tabular-nums" data-testid="time-in-state">
            {stateLabel(unit.activeState, unit.subState)} for {formatDuration(since)}
          </span>
          {unit.job && (
            <>
              {" "}
              · job #{unit.job.id} <b>{unit.job.type}</b> running
            </>
          )}
          {unit.nRestarts > 0 && <> · {unit.nRestarts} automatic restarts</>}
          {unit.activeState === "failed" && (
            <>
              {" "}
              · result <b>{unit.result}</b>
            </>
          )}
        </p>
        {visibleActions.length > 0 && (
          <div className="flex flex-wrap gap-2" role="group" aria-label="Unit actions">
            {visibleActions.map((a) => (
              <button
                key={a}
                type="button"
                disabled={mutations[a].isPending}
                onClick={() => (a === "start" || a === "reset-failed" ? run(a, "") : setConfirm(a))}
                className={`min-h-11 rounded-md px-4 py-2 text-sm font-semibold shadow-sm disabled:opacity-50 ${
                  a === "kill" || a === "stop"
                    ? "border border-red-300 bg-white text-red-800 hover:bg-red-50 dark:border-red-800 dark:bg-zinc-900 dark:text-red-300"
                    : a === "restart"
                      ? "bg-blue-700 text-white hover:bg-blue-800"
                      : "border border-zinc-300 bg-white hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900"
                }`}
              >
                {ACTION_LABEL[a]}
              </button>
            ))}
          </div>
        )}
        {refused.length > 0 && permissions && (
          <p className="text-xs text-zinc-500">
            {refused.map((a) => `${ACTION_LABEL[a]}: ${permissions[a].allowed ? "" : permissions[a].reason}`).join(" · ")}
          </p>
        )}
        {pending && (
          <JobProgress
            pending={pending}
            unit={unit}
            onDismiss={() => setPending(null)}
            onConfirmAgain={() => pending.needsConfirmation && run(pending.action, pending.needsConfirmation.reason, true)}
          />
        )}
      </header>

      <DiagnosisCard name={name} onAction={(a) => (a === "start" || a === "reset-failed" ? run(a, "") : setConfirm(a))} />

      <UnitHistory name={name} current={unit} />

      {detail && <UnitFacts detail={detail} gpuText={gpu.indexes.length ? `GPU ${gpuList(gpu.indexes)} · ${formatMiB(gpu.usedMiB)}` : "none"} />}

      <JournalTail name={name} />

      <ConfirmDialog
        open={confirm !== null}
        title={confirm ? `${ACTION_LABEL[confirm]} ${name}?` : ""}
        confirmLabel={confirm ? `${ACTION_LABEL[confirm]} ${name}` : ""}
        danger={confirm === "stop" || confirm === "kill"}
        onCancel={() => setConfirm(null)}
        onConfirm={(reason) => confirm && run(confirm, reason, recentApplies(confirm))}
      >
        {recent && recentApplies(confirm) && (
          <p
            role="alert"
            className="rounded-md border border-amber-400 bg-amber-50 px-3 py-2 font-medium text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
          >
            {recent.user} already did {recent.action} on this unit {formatDuration(now - recent.atMs)} ago. Confirm only if it must happen again.
          </p>
        )}
        <p>
          <b className="font-mono">{name}</b> is {stateLabel(unit.activeState, unit.subState)}
          {uptime !== null && <> and has been up for {formatDuration(uptime)}</>}.
        </p>
        {gpu.indexes.length > 0 ? (
          <p>
            It holds {formatMiB(gpu.usedMiB)} of GPU memory on GPU {gpuList(gpu.indexes)}. Clients lose it until it is back; a large model can take minutes to
            load, and freed GPU memory can take tens of seconds to drain.
          </p>
        ) : (
          <p>It holds no GPU memory right now.</p>
        )}
        {confirm === "kill" && <p className="font-semibold text-red-700 dark:text-red-400">SIGKILL gives the process no chance to clean up.</p>}
      </ConfirmDialog>
    </div>
  );
}

function JobProgress({ pending, unit, onDismiss, onConfirmAgain }: { pending: Pending; unit: UnitSummary; onDismiss: () => void; onConfirmAgain: () => void }) {
  const live = useLive();
  const now = useNow(500);
  const job = pending.jobId !== null ? live.jobs.get(pending.jobId) : undefined;
  const finished = job?.phase === "finished";
  const ok = finished && job.result === "done";
  let text: ReactNode;
  if (pending.error) text = pending.needsConfirmation ? <>{pending.error}</> : <>Refused: {pending.error}</>;
  else if (!pending.sent) text = <>Sending {pending.action}…</>;
  else if (pending.jobId === null) text = <>{ACTION_LABEL[pending.action]} sent.</>;
  else if (!finished)
    text = (
      <>
        Job #{pending.jobId} ({pending.action}) running for {formatDuration(now - pending.atMs)} — unit is <b>{stateLabel(unit.activeState, unit.subState)}</b>
      </>
    );
  else
    text = (
      <>
        Job #{pending.jobId} ({pending.action}) finished: <b>{job.result}</b>
      </>
    );
  const tone =
    pending.error || (finished && !ok)
      ? "border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
      : finished
        ? "border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200"
        : "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200";
  return (
    <div role="status" aria-live="polite" data-testid="job-progress" className={`flex items-start gap-3 rounded-md border px-3 py-2 text-sm ${tone}`}>
      <span className="flex-1">{text}</span>
      {pending.needsConfirmation && (
        <button type="button" onClick={onConfirmAgain} className="rounded-md border border-current px-3 py-1 text-xs font-semibold">
          {ACTION_LABEL[pending.action]} anyway
        </button>
      )}
      <button type="button" onClick={onDismiss} className="text-xs underline" aria-label="Dismiss job status">
        dismiss
      </button>
    </div>
  );
}

function UnitFacts({ detail, gpuText }: { detail: UnitDetail; gpuText: string }) {
  const rows: [string, ReactNode][] = useMemo(() => {
    const cmds = (list: ExecCommand[]) =>
      list.length === 0 ? (
        <span className="text-zinc-500">none</span>
      ) : (
        list.map((c, i) => (
          <code key={i} className="block whitespace-pre-wrap break-all">
            {formatCmdline(c.argv, Number.POSITIVE_INFINITY)}
          </code>
        ))
      );
    return [
      ["ExecStartPre", cmds(detail.execStartPre)],
      ["ExecStart", cmds(detail.execStart)],
      ["ExecStopPost", cmds(detail.execStopPost)],
      [
        "Control process",
        detail.controlProcess ? (
          <code className="whitespace-pre-wrap break-all">
            PID {detail.controlProcess.pid}: {detail.controlProcess.cmdline.join(" ")}
          </code>
        ) : (
          <span className="text-zinc-500">none</span>
        ),
      ],
      ["Main PID", detail.mainPid || <span className="text-zinc-500">none</span>],
      ["GPUs", gpuText],
      ["Timeouts", `start ${formatUsecSetting(detail.timeoutStartUsec)} · stop ${formatUsecSetting(detail.timeoutStopUsec)}`],
      [
        "Restart",
        `${detail.restart}${detail.restart !== "no" ? ` after ${formatDuration(detail.restartUsec / 1000)}` : ""} · limit ${detail.startLimitBurst} starts / ${formatDuration(detail.startLimitIntervalUsec / 1000)}`,
      ],
      [
        "Unit file",
        <code key="f" className="break-all">
          {detail.fragmentPath || "—"}
        </code>,
      ],
      ["Load / file state", `${detail.loadState} / ${detail.unitFileState || "—"}`],
      [
        "Processes",
        detail.processes.length === 0 ? (
          <span className="text-zinc-500">none</span>
        ) : (
          <ul>
            {detail.processes.map((p) => (
              <li key={p.pid}>
                <code className="break-all">
                  {p.pid} [{p.state}] {p.cmdline.join(" ")}
                </code>
              </li>
            ))}
          </ul>
        ),
      ],
    ];
  }, [detail, gpuText]);
  return (
    <section aria-labelledby="facts-heading" className="rounded-lg border border-zinc-200 dark:border-zinc-800">
      <h2 id="facts-heading" className="border-b border-zinc-200 px-4 py-2 text-sm font-semibold dark:border-zinc-800">
        Unit facts
      </h2>
      <dl className="grid grid-cols-1 gap-x-4 gap-y-2 px-4 py-3 text-sm sm:grid-cols-[10rem_1fr]">
        {rows.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="font-medium text-zinc-600 dark:text-zinc-400">{k}</dt>
            <dd className="min-w-0 text-xs sm:text-sm">{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
