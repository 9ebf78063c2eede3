/**
 * The unit's last failure, described once per diagnosis: in which phase it failed, with which
 * exit, a one-phrase summary and its evidence. Read by the failed, timeout, crash-loop, start
 * limit and flapping cases, so it is a per-call derivation.
 */
import type { UnitDetail, UnitStatePair } from "../contract/types";
import type { Diagnosis, DiagnosisCode, Evidence, NextStep } from "../contract/diagnosis";
import {
  CLD_DUMPED,
  CLD_EXITED,
  CLD_KILLED,
  exitStatusHint,
  formatClock,
  formatCmdline,
  formatDurationWords,
  formatTimestamp,
  formatUsecSetting,
  signalName,
} from "../contract/format";
import { perCall, usecToMs, type DiagnosisContext } from "./context";
import { ago, LOG_LINES, logEvidence, quote, restartCountEvidence, stateEvidence } from "./evidence";
import { findProcessExit, lastOutputLines, type FailurePoint } from "./history";

export type FailureKind = "condition" | "start-pre" | "start" | "start-post" | "running" | "stop" | "unknown";

export interface Failure {
  kind: FailureKind;
  result: string;
  atMs: number | null;
  /** "exited with code 1 (generic failure)", "was killed by SIGKILL"; null = not known */
  exitPhrase: string | null;
  exitStatus: number | null;
  /** How long the main process ran after the unit became active (kind running). */
  ranForMs: number | null;
  /** A lower-case phrase: "ExecStartPre `x` exited with code 1". */
  summary: string;
  evidence: Evidence[];
}

export function kindOfPhase(phase: UnitStatePair | null): FailureKind {
  if (phase === null) return "unknown";
  if (phase.activeState === "activating") {
    if (phase.subState === "start-pre") return "start-pre";
    if (phase.subState === "start") return "start";
    if (phase.subState === "start-post") return "start-post";
    if (phase.subState === "condition") return "condition";
    return "unknown";
  }
  if (phase.activeState === "active" || phase.activeState === "reloading") return "running";
  if (phase.activeState === "deactivating") return "stop";
  return "unknown";
}

/** Without transitions, guess the phase from the unit's own timestamps. */
function kindFromTimestamps(u: UnitDetail): FailureKind {
  const inactiveExit = usecToMs(u.timestamps.inactiveExitUsec);
  const mainStart = usecToMs(u.execMainStartUsec);
  const activeEnter = usecToMs(u.timestamps.activeEnterUsec);
  if (mainStart !== null && (inactiveExit === null || mainStart >= inactiveExit)) {
    return activeEnter !== null && (inactiveExit === null || activeEnter >= inactiveExit) ? "running" : "start";
  }
  if (u.execStartPre.length > 0) return "start-pre";
  return "unknown";
}

export function exitPhraseOf(code: "exited" | "killed" | "dumped", status: number): string {
  if (code === "exited") {
    const hint = exitStatusHint(status);
    return `exited with code ${status}${hint ? ` (${hint})` : ""}`;
  }
  if (code === "killed") return `was killed by ${signalName(status)}`;
  return `dumped core (${signalName(status)})`;
}

/** ExecMainCode (a CLD_* value) by name; null when the main process has not exited. */
export function cldName(code: number): "exited" | "killed" | "dumped" | null {
  return code === CLD_EXITED ? "exited" : code === CLD_KILLED ? "killed" : code === CLD_DUMPED ? "dumped" : null;
}

/** The last failure (ctx.failurePoint, else the unit's own fields), described once per call. */
export const lastFailure = perCall((ctx) => describeFailure(ctx, ctx.failurePoint));

function describeFailure(ctx: DiagnosisContext, point: FailurePoint | null): Failure {
  const u = ctx.unit;
  const journal = ctx.facts.journal;
  // a first observation (agent started after the failure) has no phase: read it from the timestamps
  const kind = point?.phase ? kindOfPhase(point.phase) : kindFromTimestamps(u);
  const atMs = point ? usecToMs(point.failed.atUsec) : u.activeState === "failed" ? ctx.stateEnteredMs : null;
  const result = point && point.failed.result ? point.failed.result : u.result;
  const evidence: Evidence[] = [];
  const fromUsec = point?.phaseEnteredUsec ?? null;
  const toUsec = point ? point.failed.atUsec + 1_000_000 : null;

  let exitPhrase: string | null = null;
  let exitStatus: number | null = null;
  if (kind === "start" || kind === "running" || (kind === "unknown" && u.execMainExitUsec > 0)) {
    const code = cldName(u.execMainCode);
    const exitedInAttempt =
      u.execMainExitUsec > 0 && (fromUsec === null || u.execMainExitUsec >= fromUsec) && (toUsec === null || u.execMainExitUsec <= toUsec);
    if (code && exitedInAttempt) {
      exitPhrase = exitPhraseOf(code, u.execMainStatus);
      exitStatus = u.execMainStatus;
      evidence.push({
        label: "Main process",
        value: `${exitPhrase} at ${formatClock(u.execMainExitUsec / 1000)} (ExecMainCode=${u.execMainCode}, ExecMainStatus=${u.execMainStatus})`,
        source: "systemd",
      });
    } else {
      const line = findProcessExit(journal, "main", fromUsec, toUsec);
      if (line) {
        exitPhrase = exitPhraseOf(line.code, line.status);
        exitStatus = line.status;
        evidence.push(...logEvidence([{ cursor: "", atUsec: line.atUsec, unit: ctx.name, priority: 6, pid: 1, message: line.message }]));
      }
    }
  } else if (kind !== "unknown") {
    const line = findProcessExit(journal, "control", fromUsec, toUsec);
    if (line) {
      exitPhrase = exitPhraseOf(line.code, line.status);
      exitStatus = line.status;
      evidence.push(...logEvidence([{ cursor: "", atUsec: line.atUsec, unit: ctx.name, priority: 6, pid: 1, message: line.message }]));
    }
  }

  // Which command: the unit file's lines for the phase.
  let what: string;
  if (kind === "start-pre") {
    const cmds = u.execStartPre;
    if (cmds.length === 1) what = `ExecStartPre ${quote(formatCmdline(cmds[0].argv, 120))}`;
    else if (cmds.length > 1) {
      what = `one of the ${cmds.length} ExecStartPre commands`;
      cmds.forEach((c, i) => evidence.push({ label: `ExecStartPre #${i + 1}`, value: formatCmdline(c.argv, 160), source: "systemd" }));
    } else what = "ExecStartPre";
  } else if (kind === "condition") what = "ExecCondition";
  else if (kind === "start") what = u.execStart.length > 0 ? `ExecStart ${quote(formatCmdline(u.execStart[0].argv, 120))}` : "ExecStart";
  else if (kind === "start-post") what = "ExecStartPost";
  else if (kind === "running") what = "the main process";
  else if (kind === "stop") what = "a stop command";
  else what = "it";
  if (kind === "start-pre" && u.execStartPre.length === 1) {
    evidence.push({ label: "ExecStartPre", value: formatCmdline(u.execStartPre[0].argv, 200), source: "systemd" });
  } else if ((kind === "start" || kind === "running") && u.execStart.length > 0) {
    evidence.push({ label: "ExecStart", value: formatCmdline(u.execStart[0].argv, 200), source: "systemd" });
  }

  let ranForMs: number | null = null;
  if (kind === "running") {
    const activeAt = point?.phaseEnteredUsec ?? (u.timestamps.activeEnterUsec > 0 ? u.timestamps.activeEnterUsec : null);
    const exitAt = u.execMainExitUsec > 0 && (activeAt === null || u.execMainExitUsec >= activeAt) ? u.execMainExitUsec : (point?.failed.atUsec ?? null);
    if (activeAt !== null && exitAt !== null && exitAt >= activeAt) ranForMs = (exitAt - activeAt) / 1000;
  }

  let summary: string;
  if (result === "timeout") {
    if (kind === "running" || kind === "stop") {
      summary = `stopping took longer than TimeoutStopSec=${formatUsecSetting(u.timeoutStopUsec)}${point && point.teardown.length > 0 ? ` (went through ${point.teardown.join(" → ")})` : ""}`;
    } else {
      summary = `${what} was still running when TimeoutStartSec=${formatUsecSetting(u.timeoutStartUsec)} ran out`;
    }
  } else if (result === "oom-kill") {
    summary = `the kernel's OOM killer killed a process of the unit (host RAM, not GPU memory)`;
  } else if (result === "start-limit-hit" && kind === "unknown") {
    summary = "systemd refused to start it again (start limit hit)";
  } else {
    const phrase = exitPhrase ?? (result && result !== "success" ? `failed (Result=${result})` : "failed");
    summary = `${what} ${phrase}`;
    if (kind === "start") summary += " before the service reported ready";
    if (kind === "running" && ranForMs !== null) summary += ` ${formatDurationWords(ranForMs)} after the unit became active`;
  }
  evidence.unshift({ label: "Result", value: result || "unknown", source: "systemd" });
  if (atMs !== null) evidence.unshift({ label: "Failed at", value: `${formatTimestamp(atMs)} (${ago(ctx, atMs)})`, source: "systemd" });

  const outputUntil = point ? point.failed.atUsec + 1_000_000 : null;
  evidence.push(...logEvidence(lastOutputLines(journal, LOG_LINES, outputUntil)));
  return { kind, result, atMs, exitPhrase, exitStatus, ranForMs, summary, evidence };
}

function failureNextStep(ctx: DiagnosisContext, f: Failure): NextStep {
  let text = "Fix the cause shown in the log lines, then restart it.";
  if (f.exitStatus === 203 || f.exitStatus === 127) text = "Check that the command exists and is executable (see the unit file), then restart it.";
  else if (f.result === "timeout" && f.kind !== "running" && f.kind !== "stop")
    text = "Find out why the start phase took so long (log lines), or raise TimeoutStartSec=, then restart it.";
  else if (f.result === "oom-kill") text = "Give the host more RAM headroom (MemoryMax=, model size, other processes), then restart it.";
  return { text, action: { kind: "restart", unit: ctx.name } };
}

/** " 5 min ago" after "Failed"/"Start timed out", or "" when the time is not known. */
export function failedWhen(ctx: DiagnosisContext, f: Failure): string {
  return f.atMs !== null ? ` ${ago(ctx, f.atMs)}` : "";
}

/** A final failure (the unit stays failed): its evidence and the restart button. */
export function finalFailureDiagnosis(ctx: DiagnosisContext, f: Failure, code: DiagnosisCode, headline: string, extra: Evidence[] = []): Diagnosis {
  return {
    severity: "critical",
    code,
    headline,
    evidence: [stateEvidence(ctx), ...f.evidence, ...extra, ...restartCountEvidence(ctx)],
    nextStep: failureNextStep(ctx, f),
  };
}
