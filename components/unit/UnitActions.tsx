"use client";
/**
 * The unit page's action bar: one UnitAction per action, why the refused ones have no button, and
 * the status of the last action sent (one at a time: a new action replaces the line).
 */
import { createRef, useImperativeHandle, useState, type Ref, type RefObject } from "react";
import type { UnitGpuUse } from "@/components/unitGpu";
import { UNIT_ACTIONS, type UnitAction as Action, type UnitSummary } from "@/server/contract/types";
import { JobProgress } from "./JobProgress";
import { UnitAction, type UnitActionHandle } from "./UnitAction";
import { refusedSummary, showsButton, type ActionPermissions, type ActionStatus, type RecentAction } from "./unitActions";

export type UnitActionsHandle = {
  /** the diagnosis card's "next step" button: as if that action's button was pressed */
  request: (action: Action) => void;
};

export function UnitActions({
  ref,
  host,
  name,
  unit,
  permissions,
  recent,
  activeEnterUsec,
  gpu,
}: {
  ref?: Ref<UnitActionsHandle>;
  host: string;
  name: string;
  unit: UnitSummary;
  permissions: ActionPermissions | undefined;
  recent: RecentAction | null;
  activeEnterUsec: number | undefined;
  gpu: UnitGpuUse;
}) {
  const [status, setStatus] = useState<ActionStatus | null>(null);
  const [actionRefs] = useState(
    () => Object.fromEntries(UNIT_ACTIONS.map((a) => [a, createRef<UnitActionHandle>()])) as Record<Action, RefObject<UnitActionHandle | null>>,
  );
  useImperativeHandle(ref, () => ({ request: (action) => actionRefs[action].current?.request() }), [actionRefs]);

  const anyButton = UNIT_ACTIONS.some((a) => showsButton(a, permissions?.[a], unit));
  const refused = refusedSummary(permissions);
  return (
    <>
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
            onStatus={setStatus}
          />
        ))}
      </div>
      {refused && <p className="text-xs text-zinc-500">{refused}</p>}
      {status && (
        <JobProgress
          host={host}
          status={status}
          unit={unit}
          onDismiss={() => setStatus(null)}
          onConfirmAgain={() => status.needsConfirmation && actionRefs[status.action].current?.runConfirmed(status.needsConfirmation.reason)}
        />
      )}
    </>
  );
}
