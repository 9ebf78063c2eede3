"use client";
/**
 * The status line under the unit's action buttons: sending, the job's live progress, or the
 * refusal. Its words are a polite live region; the running time beside them ticks outside it, so
 * a screen reader hears each phase and state once, not every half second.
 */
import type { ReactNode } from "react";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { stateLabel } from "@/components/StateBadge";
import { formatDuration } from "@/server/contract/format";
import type { UnitSummary } from "@/server/contract/types";
import { ACTION_LABEL, progressPhase, progressTone, type ActionStatus } from "./unitActions";

const TONE_CLASS = {
  bad: "border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200",
  ok: "border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200",
  busy: "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200",
} as const;

export function JobProgress({
  host,
  status,
  unit,
  onDismiss,
  onConfirmAgain,
}: {
  host: string;
  status: ActionStatus;
  unit: UnitSummary;
  onDismiss: () => void;
  onConfirmAgain: () => void;
}) {
  const live = useLive();
  const now = useNow(500);
  // job ids are the host's systemd's
  const job = status.jobId !== null ? live.host(host)?.jobs.get(status.jobId) : undefined;
  const phase = progressPhase(status, job);
  let text: ReactNode;
  let elapsed: string | null = null;
  switch (phase) {
    case "confirm-again":
      text = <>{status.error}</>;
      break;
    case "refused":
      text = <>Refused: {status.error}</>;
      break;
    case "sending":
      text = <>Sending {status.action}…</>;
      break;
    case "sent":
      text = <>{ACTION_LABEL[status.action]} sent.</>;
      break;
    case "running":
      text = (
        <>
          Job #{status.jobId} ({status.action}) running — unit is <b>{stateLabel(unit.activeState, unit.subState)}</b>
        </>
      );
      elapsed = formatDuration(now - status.atMs);
      break;
    case "done":
    case "failed":
      text = (
        <>
          Job #{status.jobId} ({status.action}) finished: <b>{job?.result}</b>
        </>
      );
  }
  return (
    <div
      data-testid="job-progress"
      // where focus goes when the control the user was on goes away (UnitActions)
      tabIndex={-1}
      data-focus-fallback=""
      className={`flex items-start gap-3 rounded-md border px-3 py-2 text-sm ${TONE_CLASS[progressTone(phase)]}`}
    >
      <span className="flex-1">
        <span role="status" aria-live="polite" aria-atomic="true" data-testid="job-progress-words">
          {text}
        </span>
        {elapsed && <span className="tabular-nums"> · for {elapsed}</span>}
      </span>
      {status.needsConfirmation && (
        <button type="button" onClick={onConfirmAgain} className="rounded-md border border-current px-3 py-1 text-xs font-semibold">
          {ACTION_LABEL[status.action]} anyway
        </button>
      )}
      <button type="button" onClick={onDismiss} className="text-xs underline" aria-label="Dismiss job status">
        dismiss
      </button>
    </div>
  );
}
