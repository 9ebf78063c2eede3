/**
 * What the unit page's action buttons decide without React: which actions apply to a unit's
 * state, which ask first, and how the panel's answers become the status line under the buttons.
 */
import type { Operation } from "@/server/contract/operations";
import { UNIT_ACTIONS, type UnitAction, type UnitSummary } from "@/server/contract/types";

export const ACTION_LABEL: Record<UnitAction, string> = {
  start: "Start",
  stop: "Stop",
  restart: "Restart",
  "reset-failed": "Reset failed",
  kill: "Kill (SIGKILL)",
};

/** The panel's decision for one action, as `units.get` reports it. */
export type ActionPermission = { allowed: true } | { allowed: false; reason: string };
export type ActionPermissions = Record<UnitAction, ActionPermission>;

/** The last restart/stop of this unit by anyone, as `units.get` reports it. */
export type RecentAction = { user: string; action: string; atMs: number };

/** Whether the action makes sense in the unit's current state (its button is hidden otherwise). */
export function isApplicable(action: UnitAction, u: UnitSummary): boolean {
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

/** A button only for what this user may do and what applies now. */
export function showsButton(action: UnitAction, permission: ActionPermission | undefined, u: UnitSummary): boolean {
  return permission?.allowed === true && isApplicable(action, u);
}

/** "Kill (SIGKILL): admins only · …": why the refused actions have no button; null if none is refused. */
export function refusedSummary(permissions: ActionPermissions | undefined): string | null {
  if (!permissions) return null;
  const parts = UNIT_ACTIONS.flatMap((a) => {
    const p = permissions[a];
    return p.allowed ? [] : [`${ACTION_LABEL[a]}: ${p.reason}`];
  });
  return parts.length > 0 ? parts.join(" · ") : null;
}

/** Start and reset-failed run at once; stop, restart and kill cut clients off, so they ask first. */
export function asksConfirmation(action: UnitAction): boolean {
  return action !== "start" && action !== "reset-failed";
}

export function isDangerous(action: UnitAction): boolean {
  return action === "stop" || action === "kill";
}

/**
 * The panel refuses a restart or stop soon after someone else's unless it is sent confirmed. The
 * dialog shows that recent action, so confirming the dialog is that confirmation.
 */
export function repeatGuarded(action: UnitAction, recent: RecentAction | null): recent is RecentAction {
  return recent !== null && (action === "restart" || action === "stop");
}

export function actionButtonClass(action: UnitAction): string {
  const tone =
    action === "kill" || action === "stop"
      ? "border border-red-300 bg-white text-red-800 hover:bg-red-50 dark:border-red-800 dark:bg-zinc-900 dark:text-red-300"
      : action === "restart"
        ? "bg-blue-700 text-white hover:bg-blue-800"
        : "border border-zinc-300 bg-white hover:bg-zinc-50 dark:border-zinc-700 dark:bg-zinc-900";
  return `min-h-11 rounded-md px-4 py-2 text-sm font-semibold shadow-sm disabled:opacity-50 ${tone}`;
}

/** The one action status the page shows: the last action sent, until dismissed. */
export type ActionStatus = {
  action: UnitAction;
  /** the panel has answered */
  sent: boolean;
  jobId: number | null;
  /** when this status began: a job's running time counts from its answer */
  atMs: number;
  error?: string;
  /** the server wants an explicit "yes, again" (someone just did the same to this unit) */
  needsConfirmation?: { reason: string; waitForGpus?: boolean };
  /** "when its GPUs are free": the operation the agent began (its steps follow live) */
  operation?: Operation;
};

export function sendingStatus(action: UnitAction, atMs: number): ActionStatus {
  return { action, sent: false, jobId: null, atMs };
}

export function answeredStatus(action: UnitAction, jobId: number | null, atMs: number): ActionStatus {
  return { action, sent: true, jobId, atMs };
}

/** A GPU-aware start/restart: no job, an operation. */
export function operationStatus(action: UnitAction, operation: Operation, atMs: number): ActionStatus {
  return { action, sent: true, jobId: null, atMs, operation };
}

/**
 * A refusal. Only the action guard's question ("Confirmation required: ada restarted it 10 s ago")
 * offers "… anyway" (the repeat keeps the reason first given and whether it waits for the GPUs);
 * other conflicts (a GPU-aware operation already running, a holder not killed) have nothing a
 * confirmation overrides.
 */
export function refusedStatus(
  action: UnitAction,
  error: { message: string; data?: { code?: string } | null },
  reason: string,
  atMs: number,
  waitForGpus = false,
): ActionStatus {
  const again = error.data?.code === "CONFLICT" && /^Confirmation required: /.test(error.message);
  return {
    action,
    sent: true,
    jobId: null,
    atMs,
    error: error.message,
    needsConfirmation: again ? { reason, ...(waitForGpus ? { waitForGpus } : {}) } : undefined,
  };
}

export type ProgressPhase = "confirm-again" | "refused" | "sending" | "sent" | "running" | "done" | "failed";

/** Where the action stands, from its status and its job's live events. */
export function progressPhase(status: ActionStatus, job: { phase: string; result?: string } | undefined): ProgressPhase {
  if (status.error) return status.needsConfirmation ? "confirm-again" : "refused";
  if (!status.sent) return "sending";
  if (status.jobId === null) return "sent";
  if (job?.phase !== "finished") return "running";
  return job.result === "done" ? "done" : "failed";
}

/** Red for refusals and failed jobs, green for done, amber while it is under way. */
export function progressTone(phase: ProgressPhase): "bad" | "ok" | "busy" {
  if (phase === "confirm-again" || phase === "refused" || phase === "failed") return "bad";
  return phase === "done" ? "ok" : "busy";
}
