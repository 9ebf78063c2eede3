"use client";
/**
 * The unit page's action bar: one UnitAction per action, why the refused ones have no button, and
 * the status of the last action sent (one at a time: a new action replaces the line). A GPU-aware
 * restart's status is its operation's steps; one already running when the page opens (someone
 * else's, or before a reload) shows too. When the focused control goes (Kill's button once the unit
 * is dead, a pending action's button, an operation's Cancel), focus moves to the status box.
 */
import { createRef, useImperativeHandle, useRef, useState, type Ref, type RefObject } from "react";
import { useFocusRescue } from "@/components/focus";
// loaded when an operation is under way
import { LazyOperationProgress as OperationProgress } from "@/components/operations/LazyOperationProgress";
import type { GpuWaitItem } from "@/components/operations/gpuWaitPreview";
import type { UnitGpuUse } from "@/components/unitGpu";
import { isFinalOperationStep, type Operation } from "@/server/contract/operations";
import { UNIT_ACTIONS, type UnitAction as Action, type UnitSummary } from "@/server/contract/types";
import { JobProgress } from "./JobProgress";
import { UnitAction, type UnitActionHandle } from "./UnitAction";
import { refusedSummary, showsButton, type ActionPermissions, type ActionStatus, type RecentAction } from "./unitActions";

export type UnitActionsHandle = {
  /** the diagnosis card's "next step" button: as if that action's button was pressed ("restart-when-free": Restart, on its GPU-aware choice) */
  request: (action: Action | "restart-when-free") => void;
};

/** the action's status box (JobProgress, OperationProgress) takes the focus of a control that went away */
const statusBox = (root: HTMLElement) => root.querySelector<HTMLElement>("[data-focus-fallback]");

export function UnitActions({
  ref,
  host,
  name,
  unit,
  permissions,
  recent,
  activeEnterUsec,
  gpu,
  gpuWait,
  ongoing = null,
  permissionsPending = false,
}: {
  ref?: Ref<UnitActionsHandle>;
  host: string;
  name: string;
  unit: UnitSummary;
  permissions: ActionPermissions | undefined;
  recent: RecentAction | null;
  activeEnterUsec: number | undefined;
  gpu: UnitGpuUse;
  gpuWait?: readonly GpuWaitItem[];
  /** the unit's latest GPU-aware operation, shown while no action of this page has a status */
  ongoing?: Operation | null;
  /** the permissions are on their way: keep a row of buttons' height, so the page does not jump */
  permissionsPending?: boolean;
}) {
  const [status, setStatus] = useState<ActionStatus | null>(null);
  const root = useRef<HTMLDivElement>(null);
  useFocusRescue(root, statusBox);
  const [dismissedOperation, setDismissedOperation] = useState<string | null>(null);
  const [actionRefs] = useState(
    () => Object.fromEntries(UNIT_ACTIONS.map((a) => [a, createRef<UnitActionHandle>()])) as Record<Action, RefObject<UnitActionHandle | null>>,
  );
  useImperativeHandle(
    ref,
    () => ({ request: (kind) => (kind === "restart-when-free" ? actionRefs.restart.current?.request(true) : actionRefs[kind].current?.request()) }),
    [actionRefs],
  );
  const retryWhenFree = () => actionRefs.restart.current?.request(true);
  // someone else's (or before a reload): while it runs, and once ended until dismissed
  const shownOngoing = !status && ongoing && ongoing.id !== dismissedOperation && !isFinalOperationStep(ongoing.step) ? ongoing : null;

  const anyButton = UNIT_ACTIONS.some((a) => showsButton(a, permissions?.[a], unit));
  const refused = refusedSummary(permissions);
  return (
    <div ref={root} className={`space-y-3 ${permissionsPending && !anyButton ? "min-h-[2.75rem]" : ""}`}>
      {/* The actions stay mounted while none shows a button (their calls and dialogs outlive it): then this is no group and draws no box. */}
      <div
        className={anyButton ? "flex flex-wrap gap-2" : "contents"}
        role={anyButton ? "group" : undefined}
        aria-label={anyButton ? "Unit actions" : undefined}
      >
        {UNIT_ACTIONS.map((a) => (
          <UnitAction
            key={a}
            ref={actionRefs[a]}
            action={a}
            host={host}
            name={name}
            unit={unit}
            permission={permissions?.[a]}
            recent={recent}
            activeEnterUsec={activeEnterUsec}
            gpu={gpu}
            gpuWait={gpuWait}
            onStatus={setStatus}
          />
        ))}
      </div>
      {refused && <p className="text-xs text-zinc-500 dark:text-zinc-400">{refused}</p>}
      {shownOngoing && <OperationProgress key={shownOngoing.id} host={host} operation={shownOngoing} onRetry={retryWhenFree} />}
      {status?.operation && (
        <OperationProgress
          key={status.operation.id}
          host={host}
          operation={status.operation}
          onRetry={retryWhenFree}
          onDismiss={() => {
            setDismissedOperation(status.operation!.id);
            setStatus(null);
          }}
        />
      )}
      {status && !status.operation && (
        <JobProgress
          host={host}
          status={status}
          unit={unit}
          onDismiss={() => setStatus(null)}
          onConfirmAgain={() =>
            status.needsConfirmation && actionRefs[status.action].current?.runConfirmed(status.needsConfirmation.reason, status.needsConfirmation.waitForGpus)
          }
        />
      )}
    </div>
  );
}
