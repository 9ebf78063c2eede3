/**
 * Who may do what. Checked on the server for every procedure; the UI calls the same function to
 * hide or disable controls and show the reason.
 *
 * Decisions:
 *   - viewer: sees units, GPUs, timelines; no actions, no audit log, no user or settings pages.
 *   - operator: start/stop/restart/reset-failed on units matching their patterns; may read the
 *     audit log. `kill` is admin-only by default: it is the action that leaves GPU memory held by
 *     dying processes (the incident this panel exists for); `operatorMayKill` turns it on.
 *   - admin: everything, on every unit, plus users and settings, and revealing a unit's command
 *     lines unmasked (secrets are masked for every role everywhere else).
 *   - journals (which may carry what a program printed, secrets included): operators and admins;
 *     viewers only where `viewerMayReadJournal` says so (GPUDECK_VIEWER_JOURNAL=1).
 * The agent's own allow-list (GPUDECK_UNITS) still applies beneath this.
 */
import type { UnitAction } from "../contract/types";
import { UNIT_ACTIONS } from "../contract/types";
import { matchesUnitPatterns, unitNameProblem } from "../contract/unitNames";
import type { Role } from "../contract/actors";

export type PanelAction = "view" | "audit.view" | "users.manage" | "settings.manage" | "journal.view" | "secrets.reveal";
export type Action = UnitAction | PanelAction;
export const PANEL_ACTIONS: readonly PanelAction[] = ["view", "audit.view", "users.manage", "settings.manage", "journal.view", "secrets.reveal"];

export interface AuthorizationPolicy {
  /** Let operators kill units matching their patterns. Default false (admin only). */
  operatorMayKill: boolean;
  /** Let viewers read units' journals. Default false (operators and admins). */
  viewerMayReadJournal?: boolean;
}
export const DEFAULT_AUTHORIZATION_POLICY: Readonly<AuthorizationPolicy> = Object.freeze({ operatorMayKill: false, viewerMayReadJournal: false });

/** What `can()` needs to know about the acting identity (a `User` or a `Principal` fits). */
export interface Subject {
  role: Role;
  unitPatterns: readonly string[];
  disabled?: boolean;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

/** A unit on a host; a bare name means "on the panel's host" (host-less patterns and `*:` ones apply). */
export type UnitTarget = string | { host: string; unit: string };

const ALLOW: Decision = Object.freeze({ allowed: true });
const refuse = (reason: string): Decision => ({ allowed: false, reason });

export function isUnitAction(action: string): action is UnitAction {
  return (UNIT_ACTIONS as readonly string[]).includes(action);
}

/**
 * May `subject` do `action` (on `unit`, for unit actions)? Refusals carry a sentence for the UI.
 * Fails closed: unknown roles/actions, a missing or invalid unit name are refused.
 */
export function can(
  subject: Subject | null | undefined,
  action: Action,
  target?: UnitTarget | null,
  policy: AuthorizationPolicy = DEFAULT_AUTHORIZATION_POLICY,
): Decision {
  if (!subject) return refuse("sign in first");
  if (subject.disabled) return refuse("this account is disabled");
  const role = subject.role;
  if (role !== "viewer" && role !== "operator" && role !== "admin") return refuse("unknown role");

  switch (action) {
    case "view":
      return ALLOW;
    case "audit.view":
      return role === "viewer" ? refuse("viewers cannot see the audit log") : ALLOW;
    case "users.manage":
      return role === "admin" ? ALLOW : refuse("only admins can manage users");
    case "settings.manage":
      return role === "admin" ? ALLOW : refuse("only admins can change settings");
    case "journal.view":
      return role !== "viewer" || policy.viewerMayReadJournal === true
        ? ALLOW
        : refuse("viewers cannot read journals on this panel (GPUDECK_VIEWER_JOURNAL=1 allows it)");
    case "secrets.reveal":
      return role === "admin" ? ALLOW : refuse("only admins can reveal command lines");
  }

  if (!isUnitAction(action)) return refuse(`unknown action '${String(action)}'`);
  const unit = typeof target === "object" && target !== null ? target.unit : target;
  const host = typeof target === "object" && target !== null ? target.host : null;
  if (typeof unit !== "string" || unit.length === 0) return refuse(`${action} needs a unit name`);
  const nameProblem = unitNameProblem(unit);
  if (nameProblem) return refuse(nameProblem);

  if (role === "admin") return ALLOW;
  if (role === "viewer") return refuse("viewers cannot change units");
  // operator
  if (action === "kill" && !policy.operatorMayKill) return refuse("only admins can kill units");
  if (subject.unitPatterns.length === 0) return refuse("your account has no unit patterns; ask an admin");
  if (!matchesUnitPatterns(unit, host, subject.unitPatterns)) {
    return refuse(`${host ? `${host}:` : ""}${unit} is not in your units (${subject.unitPatterns.join(", ")})`);
  }
  return ALLOW;
}

/** Every unit action with its decision, for the UI to render buttons disabled with a reason. */
export function unitPermissions(
  subject: Subject | null | undefined,
  target: UnitTarget,
  policy: AuthorizationPolicy = DEFAULT_AUTHORIZATION_POLICY,
): Record<UnitAction, Decision> {
  const out = {} as Record<UnitAction, Decision>;
  for (const action of UNIT_ACTIONS) out[action] = can(subject, action, target, policy);
  return out;
}
