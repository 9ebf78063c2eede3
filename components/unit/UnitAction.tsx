"use client";
/**
 * One unit action (start, stop, restart, reset-failed or kill): its button, shown only when the
 * user may do it and it applies to the unit's state; its confirm dialog with an optional reason;
 * and the call itself, whose progress it reports for the status line under the buttons.
 *
 * It stays mounted while its button is hidden: Start disappears as soon as the unit starts, and
 * the answer to the call must still land; the diagnosis card can ask for it too.
 *
 * Restart's dialog also offers "Restart when its GPUs are free" where the unit's processes (live or
 * exited) hold GPU memory: `units.restart({ waitForGpus: true })` begins an operation instead of a job.
 * Where a killed (exited) run's memory is still held, that is the dialog's primary button: a plain
 * restart would start the engine on GPUs that are still full.
 */
import { useMutation } from "@tanstack/react-query";
import { lazy, Suspense, useImperativeHandle, useState, type Ref } from "react";
// loaded when first opened
import { LazyConfirmDialog as ConfirmDialog } from "@/components/LazyConfirmDialog";
import type { GpuWaitItem } from "@/components/operations/gpuWaitPreview";
import { useTRPC } from "@/components/trpc";
import type { UnitGpuUse } from "@/components/unitGpu";
import { UNIT_ACTION_PROCEDURES } from "@/server/contract/procedures";
import type { UnitAction as Action, UnitSummary } from "@/server/contract/types";
import {
  ACTION_LABEL,
  actionButtonClass,
  answeredStatus,
  asksConfirmation,
  isDangerous,
  operationStatus,
  refusedStatus,
  repeatGuarded,
  sendingStatus,
  showsButton,
  type ActionPermission,
  type ActionStatus,
  type RecentAction,
} from "./unitActions";

// what the confirm dialog shows: loaded with it, when it first opens
const ActionConsequences = lazy(() => import("./ActionConsequences").then((m) => ({ default: m.ActionConsequences })));
const GpuWaitSummary = lazy(() => import("@/components/operations/GpuWaitSummary").then((m) => ({ default: m.GpuWaitSummary })));

export type UnitActionHandle = {
  /** what its button does: ask first, or run at once; `whenFree`: the dialog starts on "… when its GPUs are free" */
  request: (whenFree?: boolean) => void;
  /** send again, confirmed, after the panel asked for an explicit "again" */
  runConfirmed: (reason: string, waitForGpus?: boolean) => void;
};

/** wall clock for event handlers (kept out of render) */
const clock = () => Date.now();

export function UnitAction({
  ref,
  action,
  host,
  name,
  unit,
  permission,
  recent,
  activeEnterUsec,
  gpu,
  gpuWait = [],
  onStatus,
}: {
  ref?: Ref<UnitActionHandle>;
  action: Action;
  host: string;
  name: string;
  unit: UnitSummary;
  /** undefined until `units.get` answers: no button yet */
  permission: ActionPermission | undefined;
  recent: RecentAction | null;
  activeEnterUsec: number | undefined;
  gpu: UnitGpuUse;
  /** what the unit's last run holds per GPU (restart offers to wait for it) */
  gpuWait?: readonly GpuWaitItem[];
  onStatus: (status: ActionStatus) => void;
}) {
  const trpc = useTRPC();
  const mutation = useMutation(trpc.units[UNIT_ACTION_PROCEDURES[action]].mutationOptions());
  const [confirming, setConfirming] = useState<false | "plain" | "when-free">(false);
  const label = ACTION_LABEL[action];
  const offersWhenFree = action === "restart" && gpuWait.length > 0;
  const exitedStillHeld = offersWhenFree && gpuWait.some((w) => w.exitedPids.length > 0);

  const run = (reason: string, confirmed: boolean, waitForGpus = false) => {
    setConfirming(false);
    onStatus(sendingStatus(action, clock()));
    mutation.mutate(
      { host, name, reason: reason || undefined, ...(confirmed ? { confirmed: true } : {}), ...(waitForGpus ? { waitForGpus: true } : {}) },
      {
        onSuccess: (r) =>
          onStatus("operationId" in r && r.operationId ? operationStatus(action, r.operation, clock()) : answeredStatus(action, r.jobId, clock())),
        onError: (err) => onStatus(refusedStatus(action, err, reason, clock(), waitForGpus)),
      },
    );
  };
  const request = (whenFree = false) => (asksConfirmation(action) ? setConfirming(whenFree ? "when-free" : "plain") : run("", false));
  useImperativeHandle(ref, () => ({ request, runConfirmed: (reason, waitForGpus) => run(reason, true, waitForGpus) }));

  return (
    <>
      {showsButton(action, permission, unit) && (
        <button type="button" disabled={mutation.isPending} onClick={() => request()} className={actionButtonClass(action)}>
          {label}
        </button>
      )}
      {asksConfirmation(action) && (
        <ConfirmDialog
          open={confirming !== false}
          title={`${label} ${name}?`}
          confirmLabel={`${label} ${name}`}
          danger={isDangerous(action)}
          onCancel={() => setConfirming(false)}
          onConfirm={(reason) => run(reason, repeatGuarded(action, recent))}
          alternative={
            offersWhenFree ? { label: "Restart when its GPUs are free", onConfirm: (reason) => run(reason, repeatGuarded(action, recent), true) } : null
          }
          focusAlternative={offersWhenFree && confirming === "when-free"}
          preferAlternative={exitedStillHeld}
        >
          <ActionConsequences
            action={action}
            name={name}
            unit={unit}
            activeEnterUsec={activeEnterUsec}
            gpu={gpu}
            recentRepeat={confirming && repeatGuarded(action, recent) ? recent : null}
          />
          {/* its own boundary: it may appear while the dialog is open */}
          {offersWhenFree && (
            <Suspense fallback={null}>
              <GpuWaitSummary items={gpuWait} kind="restart" />
            </Suspense>
          )}
          {exitedStillHeld && (
            <p data-testid="exited-memory-note">
              Processes of its last run have exited but their memory is still held: a plain restart would start it on GPUs that are still full, so the restart
              waits for the memory by default.
            </p>
          )}
        </ConfirmDialog>
      )}
    </>
  );
}
