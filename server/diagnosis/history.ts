/**
 * Reading a unit's recent past: which phase a failure happened in (from the transition
 * sequence), Restart= cycles, and what systemd and the service wrote to the journal.
 * Pure helpers for the cases in ./cases/.
 */
import type { JournalEntry, UnitStatePair, UnitTransition } from "../contract/types";
import { signalNumber } from "../contract/format";

export function samePair(a: UnitStatePair | null, b: UnitStatePair | null): boolean {
  return a !== null && b !== null && a.activeState === b.activeState && a.subState === b.subState;
}

/** The phase a unit was in when it failed, and the failed transition itself. */
export interface FailurePoint {
  failed: UnitTransition;
  /** The state before systemd started tearing down (skipping deactivating/*); null = unknown. */
  phase: UnitStatePair | null;
  /** When the unit entered `phase` (µs), when known. */
  phaseEnteredUsec: number | null;
  /** deactivating sub-states passed through on the way to failed (e.g. stop-sigterm). */
  teardown: string[];
}

/**
 * Walks back from a transition into failed over deactivating/* states to the phase the failure
 * began in: activating/start-pre → deactivating/stop-sigterm → failed/failed gives start-pre.
 */
export function failurePointAt(transitions: readonly UnitTransition[], failedIndex: number): FailurePoint {
  const failed = transitions[failedIndex];
  const teardown: string[] = [];
  let phase = failed.from;
  let index = failedIndex;
  while (phase !== null && phase.activeState === "deactivating") {
    teardown.unshift(phase.subState);
    // The transition that entered this deactivating state is normally the previous one.
    let enteredAt = -1;
    for (let k = index - 1; k >= 0; k--) {
      if (samePair(transitions[k].to, phase)) {
        enteredAt = k;
        break;
      }
    }
    if (enteredAt < 0) {
      phase = null;
      break;
    }
    index = enteredAt;
    phase = transitions[index].from;
  }
  let phaseEnteredUsec: number | null = null;
  if (phase !== null) {
    for (let k = index - 1; k >= 0; k--) {
      if (samePair(transitions[k].to, phase)) {
        phaseEnteredUsec = transitions[k].atUsec;
        break;
      }
    }
  }
  return { failed, phase, phaseEnteredUsec, teardown };
}

/**
 * The most recent real failure: the last transition into failed whose phase is a start or run
 * phase. A failed entered straight from auto-restart (start limit hit while waiting to restart)
 * says nothing about the cause, so the one before it is used.
 */
export function lastFailurePoint(transitions: readonly UnitTransition[]): FailurePoint | null {
  let fallback: FailurePoint | null = null;
  for (let i = transitions.length - 1; i >= 0; i--) {
    if (transitions[i].to.activeState !== "failed") continue;
    const point = failurePointAt(transitions, i);
    fallback ??= point;
    const phase = point.phase;
    if (phase === null) continue;
    if (phase.subState === "auto-restart" || phase.activeState === "inactive" || phase.activeState === "failed") continue;
    return point;
  }
  return fallback;
}

/** Transitions into activating/auto-restart, i.e. automatic restarts Restart= scheduled. */
export function autoRestarts(transitions: readonly UnitTransition[]): UnitTransition[] {
  return transitions.filter((t) => t.to.subState === "auto-restart");
}

/** The newest transition into the given state pair. */
export function lastTransitionInto(transitions: readonly UnitTransition[], predicate: (to: UnitStatePair) => boolean): UnitTransition | null {
  for (let i = transitions.length - 1; i >= 0; i--) if (predicate(transitions[i].to)) return transitions[i];
  return null;
}

// ---------------------------------------------------------------------------------------
// Journal

export interface ProcessExitLine {
  who: "main" | "control";
  code: "exited" | "killed" | "dumped";
  status: number;
  atUsec: number;
  message: string;
}

// systemd 252: "Main process exited, code=exited, status=1/FAILURE",
// "Control process exited, code=killed, status=9/KILL", "…, code=dumped, status=11/SEGV".
const EXIT_LINE_RE = /\b(Main|Control) process exited, code=(exited|killed|dumped), status=(\d+|[A-Z]+)(?:\/([A-Z_0-9]+))?/;

export function parseProcessExit(entry: JournalEntry): ProcessExitLine | null {
  const match = EXIT_LINE_RE.exec(entry.message);
  if (!match) return null;
  const code = match[2] as ProcessExitLine["code"];
  let status = /^\d+$/.test(match[3]) ? Number(match[3]) : NaN;
  if (Number.isNaN(status) && code !== "exited") status = signalNumber(match[3]) ?? NaN;
  if (Number.isNaN(status)) return null;
  return { who: match[1] === "Main" ? "main" : "control", code, status, atUsec: entry.atUsec, message: entry.message };
}

/** The newest exit line for `who` within [fromUsec, toUsec] (bounds optional). */
export function findProcessExit(
  journal: readonly JournalEntry[],
  who: "main" | "control",
  fromUsec: number | null,
  toUsec: number | null,
): ProcessExitLine | null {
  for (let i = journal.length - 1; i >= 0; i--) {
    const entry = journal[i];
    if (toUsec !== null && entry.atUsec > toUsec) continue;
    if (fromUsec !== null && entry.atUsec < fromUsec) break;
    const parsed = parseProcessExit(entry);
    if (parsed && parsed.who === who) return parsed;
  }
  return null;
}

// What systemd itself logs about a unit (as opposed to the service's own output).
const MANAGER_MESSAGE_RE =
  /^(Main process exited|Control process exited|Failed with result|Failed to start|Started |Starting |Stopped |Stopping |Scheduled restart job|Consumed .* CPU time|Deactivated successfully|Dependency failed|Start request repeated too quickly|Unit .* entered failed state|State '.*' timed out|start(-pre|-post)? operation timed out|stop-sigterm timed out|Killing process|Processes still around after|A process of this unit has been killed by the OOM killer|Failed to execute|Failed at step|Job .* failed)/;

export function isManagerMessage(entry: JournalEntry): boolean {
  return entry.pid === 1 || MANAGER_MESSAGE_RE.test(entry.message);
}

/** The service's own last lines (not systemd's), newest last; falls back to any lines. */
export function lastOutputLines(journal: readonly JournalEntry[], count: number, untilUsec: number | null = null): JournalEntry[] {
  const eligible = journal.filter((e) => untilUsec === null || e.atUsec <= untilUsec);
  const output = eligible.filter((e) => !isManagerMessage(e) && e.message.trim() !== "");
  return (output.length > 0 ? output : eligible).slice(-count);
}

/** Lines systemd logs when it refuses a unit file or a start, newest last. */
export function managerComplaints(journal: readonly JournalEntry[], count: number): JournalEntry[] {
  return journal.filter((e) => e.priority <= 4 || /Failed to execute|Failed at step|Unknown key|Invalid|Refusing|not found/i.test(e.message)).slice(-count);
}

const DEPENDENCY_RE = /Dependency failed for /;

/** The newest journal sign that a start was cancelled because a dependency failed. */
export function lastDependencyFailure(journal: readonly JournalEntry[]): JournalEntry | null {
  for (let i = journal.length - 1; i >= 0; i--) {
    const entry = journal[i];
    if (entry.jobResult === "dependency" || DEPENDENCY_RE.test(entry.message)) return entry;
  }
  return null;
}

export function startLimitLine(journal: readonly JournalEntry[]): JournalEntry | null {
  for (let i = journal.length - 1; i >= 0; i--) {
    if (/Start request repeated too quickly/.test(journal[i].message)) return journal[i];
  }
  return null;
}
