"use client";
/**
 * One unit action (start, stop, restart, reset-failed or kill): its button, shown only when the
 * user may do it and it applies to the unit's state; its confirm dialog with an optional reason;
 * and the call itself, whose progress it reports for the status line under the buttons.
 *
 * It stays mounted while its button is hidden: Start disappears as soon as the unit starts, and
 * the answer to the call must still land; the diagnosis card can ask for it too.
 */
import { useMutation } from "@tanstack/react-query";
import { useImperativeHandle, useState, type Ref } from "react";
import { ConfirmDialog } from "@/components/ConfirmDialog";
import { useTRPC } from "@/components/trpc";
import type { UnitGpuUse } from "@/components/unitGpu";
import { UNIT_ACTION_PROCEDURES } from "@/server/contract/procedures";
import type { UnitAction as Action, UnitSummary } from "@/server/contract/types";
import { ActionConsequences } from "./ActionConsequences";
import {
  ACTION_LABEL,
  actionButtonClass,
  answeredStatus,
  asksConfirmation,
  isDangerous,
  refusedStatus,
  repeatGuarded,
  sendingStatus,
  showsButton,
  type ActionPermission,
  type ActionStatus,
  type RecentAction,
} from "./unitActions";

export type UnitActionHandle = {
  /** what its button does: ask first, or run at once */
  request: () => void;
  /** send again, confirmed, after the panel asked for an explicit "again" */
  runConfirmed: (reason: string) => void;
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
  onStatus: (status: ActionStatus) => void;
}) {
  const trpc = useTRPC();
  const mutation = useMutation(trpc.units[UNIT_ACTION_PROCEDURES[action]].mutationOptions());
  const [confirming, setConfirming] = useState(false);
  const label = ACTION_LABEL[action];

  const run = (reason: string, confirmed: boolean) => {
    setConfirming(false);
    onStatus(sendingStatus(action, clock()));
    mutation.mutate(
      { host, name, reason: reason || undefined, ...(confirmed ? { confirmed: true } : {}) },
      {
        onSuccess: (r) => onStatus(answeredStatus(action, r.jobId, clock())),
        onError: (err) => onStatus(refusedStatus(action, err, reason, clock())),
      },
    );
  };
  const request = () => (asksConfirmation(action) ? setConfirming(true) : run("", false));
  useImperativeHandle(ref, () => ({ request, runConfirmed: (reason) => run(reason, true) }));

  return (
    <>
      {showsButton(action, permission, unit) && (
        <button type="button" disabled={mutation.isPending} onClick={request} className={actionButtonClass(action)}>
          {label}
        </button>
      )}
      {asksConfirmation(action) && (
        <ConfirmDialog
          open={confirming}
          title={`${label} ${name}?`}
          confirmLabel={`${label} ${name}`}
          danger={isDangerous(action)}
          onCancel={() => setConfirming(false)}
          onConfirm={(reason) => run(reason, repeatGuarded(action, recent))}
        >
          <ActionConsequences
            action={action}
            name={name}
            unit={unit}
            activeEnterUsec={activeEnterUsec}
            gpu={gpu}
            recentRepeat={confirming && repeatGuarded(action, recent) ? recent : null}
          />
        </ConfirmDialog>
      )}
    </>
  );
}
