/**
 * Which unit state changes become timeline transitions. Pure; the adapter feeds it snapshots.
 *
 * - Live: systemd sends PropertiesChanged for every job change too, often with an unchanged
 *   ActiveState/SubState (and even a StateChangeTimestamp moved by microseconds when a state
 *   is "re-entered" on job completion). Only a change of the pair is a transition; its time is
 *   systemd's StateChangeTimestamp.
 * - After a gap (bus dropped, systemd re-executed): the pair may have changed several times.
 *   systemd's per-state timestamps (InactiveExit, ActiveEnter, ActiveExit, InactiveEnter) tell
 *   when the unit last passed each boundary; those that moved during the gap become
 *   reconstructed transitions (subState "" = not observed), then the final state.
 * - Restart= cycles: the transient failed/failed (or inactive/dead) between a crash and the
 *   automatic restart, activating/auto-restart itself, and the restart job's inactive/dead
 *   are tagged `inRestartCycle`, so they are not mistaken for the final result.
 */
import type { UnitStatePair, UnitTransition } from "../../contract/types";
import type { ExitStatusSet } from "./dbusValues";
import type { UnitSnapshot } from "./unitProps";

export function pairOf(s: { activeState: string; subState: string }): UnitStatePair {
  return { activeState: s.activeState, subState: s.subState };
}

export function samePair(a: UnitStatePair, b: UnitStatePair): boolean {
  return a.activeState === b.activeState && a.subState === b.subState;
}

/** Jobs that stop the unit on purpose: a process dying under them is no Restart= case. */
const STOPPING_JOB_TYPES = new Set(["stop", "restart", "try-restart", "reload-or-restart", "reload-or-try-restart"]);
/** ActiveStates in which a process of the unit runs (so it can die and be restarted). */
const RUNNING_STATES = new Set(["active", "activating", "deactivating", "reloading"]);

function exitMatches(set: ExitStatusSet, code: number, status: number): boolean {
  // CLD_EXITED = 1; CLD_KILLED = 2, CLD_DUMPED = 3
  if (code === 1) return set.statuses.includes(status);
  if (code === 2 || code === 3) return set.signals.includes(status);
  return false;
}

/**
 * Whether systemd will restart this service after the failure it just reported, following
 * service_shall_restart() in systemd 252: a manual stop wins, then RestartPreventExitStatus,
 * then RestartForceExitStatus, then the Restart= policy against Result.
 */
export function predictsAutoRestart(s: UnitSnapshot): boolean {
  if (s.restart === "") return false; // not a service
  if (s.job && STOPPING_JOB_TYPES.has(s.job.type)) return false;
  if (s.result === "start-limit-hit") return false;
  if (exitMatches(s.restartPreventExitStatus, s.execMainCode, s.execMainStatus)) return false;
  if (exitMatches(s.restartForceExitStatus, s.execMainCode, s.execMainStatus)) return true;
  const r = s.result;
  switch (s.restart) {
    case "always":
      return r !== "exec-condition";
    case "on-success":
      return r === "success";
    case "on-failure":
      return r !== "success" && r !== "exec-condition";
    case "on-abnormal":
      return r !== "success" && r !== "exit-code" && r !== "exec-condition";
    case "on-watchdog":
      return r === "watchdog";
    case "on-abort":
      return r === "signal" || r === "core-dump";
    default:
      return false;
  }
}

/** Is the step prev → next a transient part of a Restart= cycle? */
export function isRestartCycleStep(prev: UnitSnapshot | null, next: UnitSnapshot): boolean {
  if (next.subState === "auto-restart") return true;
  if (!prev) return false;
  if (prev.subState === "auto-restart") {
    // The automatic restart job first takes the unit to inactive/dead, then starts it (or, past
    // the start limit, fails it: that failed/failed is final and not tagged).
    return next.activeState === "inactive" && next.subState === "dead" && next.job !== null && next.job.type !== "stop";
  }
  const dying = next.activeState === "failed" || (next.activeState === "inactive" && next.subState === "dead");
  // Passing through deactivating and ending cleanly is a stop systemd was asked for (even when
  // the stop job was too quick for us to learn its type); failures there (timeout, watchdog) restart.
  if (prev.activeState === "deactivating" && next.result === "success") return false;
  return dying && RUNNING_STATES.has(prev.activeState) && predictsAutoRestart(next);
}

function transition(
  next: UnitSnapshot,
  from: UnitStatePair | null,
  to: UnitStatePair,
  atUsec: number,
  inRestartCycle: boolean,
  pids: { mainPid: number; controlPid: number },
): UnitTransition {
  return {
    unit: next.name,
    atUsec,
    from,
    to,
    result: next.result,
    mainPid: pids.mainPid,
    controlPid: pids.controlPid,
    nRestarts: next.nRestarts,
    inRestartCycle,
  };
}

/** The per-state timestamp systemd sets when a unit enters this ActiveState from another one. */
const ENTER_BOUNDARY: Record<string, Boundary> = {
  active: "activeEnterUsec",
  activating: "inactiveExitUsec",
  deactivating: "activeExitUsec",
  inactive: "inactiveEnterUsec",
  failed: "inactiveEnterUsec",
};

/**
 * When `next`'s state began. StateChangeTimestamp moves again when systemd re-enters the same
 * state (a job finishing re-notifies it a fraction of a millisecond later), so when the
 * ActiveState itself changed, the matching per-state timestamp (e.g. ActiveEnterTimestamp) is
 * the exact moment; for a SubState change within one ActiveState, StateChangeTimestamp is.
 */
export function enteredAt(prevActiveState: string, prev: UnitSnapshot, next: UnitSnapshot): number {
  const key = prevActiveState === next.activeState ? undefined : ENTER_BOUNDARY[next.activeState];
  if (key) {
    const at = next[key];
    if (at > 0 && at !== prev[key] && at > prev.stateChangeUsec && at <= next.stateChangeUsec) return at;
  }
  return next.stateChangeUsec;
}

/** First sight of a unit: its current state, since systemd's own timestamp. */
export function firstObservation(next: UnitSnapshot): UnitTransition {
  return transition(next, null, pairOf(next), next.stateChangeUsec, next.subState === "auto-restart", next);
}

/** A live PropertiesChanged: a transition, or null when the pair did not change. */
export function liveTransition(prev: UnitSnapshot | null, next: UnitSnapshot): UnitTransition | null {
  if (!prev) return firstObservation(next);
  if (samePair(prev, next)) return null;
  return transition(next, pairOf(prev), pairOf(next), enteredAt(prev.activeState, prev, next), isRestartCycleStep(prev, next), next);
}

type Boundary = "inactiveExitUsec" | "activeEnterUsec" | "activeExitUsec" | "inactiveEnterUsec";
const BOUNDARIES: ReadonlyArray<[Boundary, string]> = [
  ["inactiveExitUsec", "activating"],
  ["activeEnterUsec", "active"],
  ["activeExitUsec", "deactivating"],
  // systemd's "inactive" here includes failed; which of the two it was is not recorded
  ["inactiveEnterUsec", "inactive"],
];

/**
 * After a gap in observation: what happened between `prev` (last seen) and `next` (re-read).
 * Returns [] when nothing changed. Never repeats `prev`'s own state.
 */
export function reconcileTransitions(prev: UnitSnapshot, next: UnitSnapshot): UnitTransition[] {
  const steps: Array<{ at: number; activeState: string }> = [];
  for (const [key, activeState] of BOUNDARIES) {
    const at = next[key];
    if (at > 0 && at !== prev[key] && at > prev.stateChangeUsec && at < next.stateChangeUsec) steps.push({ at, activeState });
  }
  steps.sort((a, b) => a.at - b.at);
  // The last boundary crossed usually is the final state itself, which we know exactly.
  while (steps.length > 0 && steps[steps.length - 1]!.activeState === next.activeState) steps.pop();

  const out: UnitTransition[] = [];
  let from = pairOf(prev);
  let fromSnapshot: UnitSnapshot = prev;
  const noPids = { mainPid: 0, controlPid: 0 };
  for (const step of steps) {
    if (step.activeState === from.activeState) continue;
    const to = { activeState: step.activeState, subState: "" };
    out.push(transition(next, from, to, step.at, false, noPids));
    from = to;
    fromSnapshot = { ...prev, activeState: to.activeState, subState: "" };
  }
  const finalPair = pairOf(next);
  if (!samePair(from, finalPair)) {
    out.push(transition(next, from, finalPair, enteredAt(from.activeState, prev, next), isRestartCycleStep(fromSnapshot, next), next));
  }
  return out;
}
