"use client";
/**
 * The status box of a GPU-aware restart ("restart when its GPUs are free") under the unit's
 * actions: its steps, the memory its last run still holds (falling while it drains) per GPU with
 * the PIDs, the agent's message, the time left to the deadline and, while it stops or waits, a
 * Cancel button. Refused because a process outside the unit holds memory on its GPUs: those
 * processes, each with a SIGKILL button for admins.
 */
import { useMutation } from "@tanstack/react-query";
import { useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { formatDuration, formatMiB, formatTime } from "@/server/contract/format";
import type { Operation } from "@/server/contract/operations";
import { ForeignHolders } from "./ForeignHolders";
import { OperationSteps } from "./OperationSteps";
import { operationGpus, operationView, STEP_LABEL, type OperationTone } from "./operationView";
import { useOperation } from "./useOperation";

const TONE_CLASS: Record<OperationTone, string> = {
  bad: "border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200",
  ok: "border-emerald-300 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200",
  busy: "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200",
  idle: "border-zinc-300 bg-zinc-50 text-zinc-900 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100",
};

export function OperationProgress({
  host,
  operation: initial,
  onDismiss,
  onRetry,
}: {
  host: string;
  operation: Operation;
  onDismiss?: () => void;
  /** ask again (after a holder was killed, or a timeout) */
  onRetry?: () => void;
}) {
  const trpc = useTRPC();
  const now = useNow(500);
  const op = useOperation(host, initial);
  const view = operationView(op, now);
  const cancel = useMutation(trpc.operations.cancel.mutationOptions());
  const kindText = op.kind === "restart" ? "Restart" : "Start";
  return (
    <section
      aria-label={`${kindText} when its GPUs are free`}
      data-testid="operation"
      data-step={op.step}
      data-held-mib={op.heldMiB}
      className={`space-y-2 rounded-md border px-3 py-2 text-sm ${TONE_CLASS[view.tone]}`}
    >
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        {/* where focus goes when the control the user was on goes away, e.g. Cancel once canceled (UnitActions) */}
        <h3 className="font-semibold" tabIndex={-1} data-focus-fallback="">
          {kindText} when its GPUs are free: <span data-testid="operation-step">{STEP_LABEL[op.step]}</span>
        </h3>
        <span className="text-xs opacity-80">
          operation {op.id} by {op.user}, asked at {formatTime(op.createdAtMs)}
        </span>
      </div>
      <OperationSteps steps={view.steps} />
      {/* the agent rewrites its message with every GPU sample (the MiB left): a screen reader hears only
          each step's first message, in a polite live region of its own */}
      <p data-testid="operation-message">{op.message || "Asked; waiting for the agent's first report."}</p>
      <p role="status" aria-live="polite" aria-atomic="true" className="sr-only" data-testid="operation-announcement">
        {STEP_LABEL[op.step]}: {op.steps.at(-1)?.message || op.message || "asked; waiting for the agent's first report."}
      </p>
      {!view.final && (
        <p className="tabular-nums" data-testid="operation-held">
          {op.heldMiB > 0 ? (
            <>
              <b>{formatMiB(op.heldMiB)}</b> still held on {operationGpus(op)}
              {view.heldAtWaitStartMiB != null && view.heldAtWaitStartMiB > op.heldMiB && <> (was {formatMiB(view.heldAtWaitStartMiB)} when the wait began)</>}
            </>
          ) : (
            <>Nothing of its last run holds GPU memory now.</>
          )}
          {view.timeLeftMs != null && (
            <>
              {" "}
              · gives up in {formatDuration(view.timeLeftMs)} (timeout {formatDuration(op.timeoutMs)})
            </>
          )}
        </p>
      )}
      {!view.final && view.gpuLines.length > 0 && (
        <ul className="text-xs tabular-nums" aria-label="Still held, per GPU" data-testid="operation-gpus">
          {view.gpuLines.map((l) => (
            <li key={l}>{l}</li>
          ))}
        </ul>
      )}
      {op.foreign.length > 0 && <ForeignHolders host={host} unit={op.unit} holders={op.foreign} onRetry={onRetry} />}
      {cancel.error && <p role="alert">Cancel refused: {cancel.error.message}</p>}
      <div className="flex flex-wrap gap-2">
        {view.cancellable && (
          <button
            type="button"
            disabled={cancel.isPending}
            onClick={() => cancel.mutate({ host, id: op.id })}
            className="min-h-10 rounded-md border border-current px-3 py-1 text-sm font-semibold disabled:opacity-50"
          >
            Cancel (leave it stopped)
          </button>
        )}
        {view.final && op.step !== "started" && onRetry && (
          <button type="button" onClick={onRetry} className="min-h-10 rounded-md border border-current px-3 py-1 text-sm font-semibold">
            Try again…
          </button>
        )}
        {view.final && onDismiss && (
          <button type="button" onClick={onDismiss} className="text-xs underline" aria-label="Dismiss operation status">
            dismiss
          </button>
        )}
      </div>
    </section>
  );
}
