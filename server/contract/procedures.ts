/**
 * Procedure names other tools call (a contract: never rename one, only add). The agent and the
 * panel serve the same names for the same things; the panel adds session, setup, users and
 * audit. Part of the contract: imports nothing else of the project.
 */
import type { UnitAction } from "./types";

/** Unit action → its procedure under `units.` (and the audit log's action name is the key). */
export const UNIT_ACTION_PROCEDURES = {
  start: "start",
  stop: "stop",
  restart: "restart",
  "reset-failed": "resetFailed",
  kill: "kill",
} as const satisfies Record<UnitAction, string>;

export type UnitActionProcedure = (typeof UNIT_ACTION_PROCEDURES)[UnitAction];

/** The action a `units.*` procedure name stands for, if it is one. */
export function unitActionOfProcedure(procedure: string): UnitAction | null {
  const entry = Object.entries(UNIT_ACTION_PROCEDURES).find(([, p]) => p === procedure);
  return entry ? (entry[0] as UnitAction) : null;
}

/** User-management mutations → their audit action names (the web and `npm run user` record the same). */
export const USER_PROCEDURE_AUDIT_ACTIONS = {
  create: "user.add",
  update: "user.update",
  // refused before its input was read, enable and disable look the same
  setDisabled: "user.set-disabled",
  resetPassword: "user.passwd",
  resetTwoFactor: "user.2fa.reset",
} as const;
