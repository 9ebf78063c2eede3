/**
 * "Why won't it start?" — one diagnosis of a systemd unit from facts the agent already holds.
 *
 * Public API (stable; the agent recomputes it live on every fact change, the panel renders it):
 *
 *   diagnose(facts: DiagnosisFacts): Diagnosis
 *     Pure and synchronous: no I/O, no clock (everything is relative to facts.nowMs), never throws
 *     on partial facts (missing GPU data, null telemetry cells, empty history or journal).
 *
 *   gpusUsedByUnit(unitName: string, samples: (GpuSample | null)[]): string[]
 *     GPU uuids on which the unit's processes (live or exited) held memory in those samples; the
 *     agent can pass the result as facts.unitGpus from a longer history than the last minute.
 *
 *   DIAGNOSIS_CODES / DiagnosisCode: the stable id of every case (see ./types.ts).
 *
 * Diagnosis = { severity: ok|info|warning|critical, code, headline (one sentence with the key
 * numbers), evidence: {label, value, source}[], nextStep?: {text, action?: {kind, unit}},
 * etaMs?: ms from facts.nowMs until the awaited event (memory free, SIGKILL, timeout, restart) }.
 *
 * Cases (issue 6): waiting in ExecStartPre for GPU memory held by an exited process / another
 * unit / a process outside any unit / nobody listed; ExecStartPre or ExecStart exited non-zero;
 * Result=timeout and its phase; crash loop and start limit; main process exited soon after
 * becoming active; LoadState not-found / masked / bad-setting / error and failed dependencies
 * (named, from facts.dependencies, when the agent read them);
 * stop stuck in stop-sigterm; healthy; plus stopped, queued, plain start-pre and unknown states.
 */
import type { DependencyState, DiagnosisFacts } from "./types";
import type { Diagnosis, Evidence, NextStep } from "../contract/diagnosis";
import {
  formatCmdline,
  formatDurationWords,
  formatGpus,
  formatMiBRounded,
  formatState,
  formatTimestamp,
  formatUsecSetting,
  isInfiniteUsec,
} from "../contract/format";
import { loadStateCase, unitNotKnown } from "./cases/loadState";
import { maintenanceCase, reloadingCase, startQueuedCase, stoppedCase, unknownStateCase } from "./cases/quietStates";
import { startPhaseCase, startPreRunningCase } from "./cases/startPhases";
import { waitingForGpuCase } from "./cases/waitingForGpu";
import { buildContext, msToUsec, usecToMs, type DiagnosisContext } from "./context";
import { ago, capitalize, logEvidence, quote, restartCountEvidence, stateEvidence } from "./evidence";
import { MIN_CONTENTION_MIB } from "./gpu";
import { gpuContention, holderEvidence, holderPhrase, memoryEvidence } from "./gpuEvidence";
import { lastDependencyFailure, lastTransitionInto, samePair, startLimitLine } from "./history";
import { failedWhen, finalFailureDiagnosis, kindOfPhase, lastFailure, type Failure } from "./lastFailure";
import { controlCommand, processCommandText } from "./processes";
import { allRestarts, restartHistory, restartPolicyEvidence, restartsPhrase, restartWouldApply } from "./restarts";
import { hasTimeout } from "./startDeadline";

export { gpusUsedByUnit } from "./gpu";
export { DIAGNOSIS_CODES } from "../contract/diagnosis";
export type { DependencyState, DiagnosisFacts } from "./types";
export type { Diagnosis, DiagnosisCode, DiagnosisSeverity, Evidence, NextStep } from "../contract/diagnosis";
export { GPU_SAMPLE_STALE_MS } from "./gpuEvidence";
export { execArgv } from "./processes";

/** A main process that dies within this long after becoming active "exited soon after start". */
export const SOON_AFTER_ACTIVE_MS = 60_000;
/** A stop in stop-sigterm for longer than this is "stuck" (a clean stop takes milliseconds). */
export const STOP_STUCK_AFTER_MS = 5_000;
/** Automatic restarts within this window make a running unit "flapping". */
export const FLAPPING_WINDOW_MS = 10 * 60_000;

type Ctx = DiagnosisContext;

export function diagnose(facts: DiagnosisFacts): Diagnosis {
  const unit = facts.unit;
  if (unit === null) return unitNotKnown(facts.requestedName, facts.journal);
  const ctx = buildContext(facts, unit);

  const load = loadStateCase.diagnose(ctx);
  if (load) return load;

  switch (unit.activeState) {
    case "active":
      return diagnoseActive(ctx);
    case "reloading":
      return reloadingCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
    case "activating":
      return diagnoseActivating(ctx);
    case "deactivating":
      return diagnoseDeactivating(ctx);
    case "failed":
      return diagnoseFailed(ctx);
    case "inactive":
      return diagnoseInactive(ctx);
    case "maintenance":
      return maintenanceCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
    default:
      return unknownStateCase.diagnose(ctx);
  }
}

// ---------------------------------------------------------------------------------------
// Failures (cases 4, 5, 7)

function failureCode(f: Failure): Diagnosis["code"] {
  if (f.result === "timeout") return f.kind === "running" || f.kind === "stop" ? "stop-timeout" : "start-timeout";
  if (f.result === "oom-kill") return "oom-killed";
  switch (f.kind) {
    case "start-pre":
    case "condition":
      return "start-pre-failed";
    case "start":
      return "start-failed";
    case "start-post":
      return "start-post-failed";
    case "running":
      return f.ranForMs !== null && f.ranForMs <= SOON_AFTER_ACTIVE_MS ? "exited-after-start" : "main-exited";
    default:
      return "failed";
  }
}

/** If a start-pre polled nvidia-smi and GPU memory is still held, a clause saying so. */
function gpuStillHeldClause(ctx: Ctx): { clause: string; evidence: Evidence[] } | null {
  const pollsGpu = ctx.unit.execStartPre.some((c) => [c.path, ...c.argv].some((a) => a.includes("nvidia-smi")));
  if (!pollsGpu) return null;
  const c = gpuContention(ctx);
  if (!c || c.totalHeldMiB < MIN_CONTENTION_MIB) return null;
  const heldGroups = [...c.otherUnits, ...c.leftover, ...c.outside, ...c.exited];
  const holderText = heldGroups.length > 0 ? holderPhrase(ctx, heldGroups[0]) : "no listed process";
  return {
    clause: `; it polls nvidia-smi, and ${formatMiBRounded(c.totalHeldMiB)} of GPU memory is still held on ${formatGpus(c.gpus)} (by ${holderText})`,
    evidence: [memoryEvidence(c), ...heldGroups.slice(0, 4).map((g) => holderEvidence(ctx, g))],
  };
}

function diagnoseFinalFailure(ctx: Ctx): Diagnosis {
  const f = lastFailure(ctx);
  const code = failureCode(f);
  const when = failedWhen(ctx, f);
  if (code === "start-timeout") {
    const gpu = f.kind === "start-pre" ? gpuStillHeldClause(ctx) : null;
    return finalFailureDiagnosis(ctx, f, code, `Start timed out${when}: ${f.summary}, so systemd stopped it${gpu ? gpu.clause : ""}.`, gpu?.evidence);
  }
  if (code === "stop-timeout") return finalFailureDiagnosis(ctx, f, code, `Stop timed out${when}: ${f.summary}, so systemd killed it and marked it failed.`);
  return finalFailureDiagnosis(ctx, f, code, `Failed${when}: ${f.summary}.`);
}

// ---------------------------------------------------------------------------------------
// Crash loop (case 6)

function crashLoopCycling(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  const f = lastFailure(ctx);
  const history = allRestarts(ctx);
  let etaMs: number | undefined;
  let next = "";
  if (u.activeState === "activating" && u.subState === "auto-restart") {
    const entered = ctx.stateEnteredMs;
    if (entered !== null) {
      etaMs = Math.max(0, entered + u.restartUsec / 1000 - ctx.now);
      next = `, next restart in ${formatDurationWords(etaMs)}`;
    }
  } else {
    next = ", restarting now";
  }
  const first = history.count <= 1;
  return {
    severity: first ? "warning" : "critical",
    code: first ? "auto-restart-pending" : "crash-loop",
    headline: first
      ? `${capitalize(f.summary)}; systemd restarts it${next ? next.replace(/^, /, " — ") : ""} (Restart=${u.restart}).`
      : `Crash loop: ${f.summary}; ${restartsPhrase(ctx, history)}${next}.`,
    evidence: [stateEvidence(ctx), ...f.evidence, ...restartPolicyEvidence(ctx)],
    nextStep: first ? undefined : { text: "Stop it to end the loop while you fix the cause shown in the log lines.", action: { kind: "stop", unit: ctx.name } },
    etaMs,
  };
}

function startLimitHit(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  const f = lastFailure(ctx);
  const history = allRestarts(ctx);
  const limit =
    u.startLimitBurst > 0 && !isInfiniteUsec(u.startLimitIntervalUsec)
      ? ` (StartLimitBurst=${u.startLimitBurst} per ${formatUsecSetting(u.startLimitIntervalUsec)})`
      : "";
  const limitLine = startLimitLine(ctx.facts.journal);
  return {
    severity: "critical",
    code: "start-limit-hit",
    headline: `Start limit hit: systemd gave up after it ${restartsPhrase(ctx, history)}${limit}; the last attempt failed because ${f.summary}.`,
    evidence: [stateEvidence(ctx), ...f.evidence, ...restartPolicyEvidence(ctx), ...(limitLine ? logEvidence([limitLine]) : [])],
    nextStep: {
      text: "Fix the cause shown in the log lines, then reset the failed state (clears the start limit) and start it again.",
      action: { kind: "reset-failed", unit: ctx.name },
    },
  };
}

/** A final failed state is the end of a Restart= loop when the start limit stopped it. */
function isStartLimitEnd(ctx: Ctx): boolean {
  const u = ctx.unit;
  if (u.result === "start-limit-hit") return true;
  const line = startLimitLine(ctx.facts.journal);
  const entered = ctx.stateEnteredMs;
  if (line && (entered === null || line.atUsec >= msToUsec(entered) - 2_000_000)) return true;
  const history = allRestarts(ctx);
  if (history.count === 0) return false;
  if (u.startLimitBurst > 0 && u.nRestarts >= u.startLimitBurst) return true;
  // Restart= would have restarted this result; only the start limit stops it.
  return history.observed > 0 && restartWouldApply(u.restart, u.result);
}

// ---------------------------------------------------------------------------------------
// States

function diagnoseFailed(ctx: Ctx): Diagnosis {
  const last = ctx.lastTransition;
  if (last && last.to.activeState === "failed" && last.inRestartCycle) return crashLoopCycling(ctx);
  const dependency = dependencyFailure(ctx);
  if (dependency) return dependency;
  if (isStartLimitEnd(ctx)) return startLimitHit(ctx);
  return diagnoseFinalFailure(ctx);
}

function diagnoseInactive(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  const last = ctx.lastTransition;
  if (last && last.inRestartCycle && samePair(last.to, u)) return crashLoopCycling(ctx);
  const dependency = dependencyFailure(ctx);
  if (dependency) return dependency;
  return startQueuedCase.diagnose(ctx) ?? stoppedCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
}

function dependencyFailure(ctx: Ctx): Diagnosis | null {
  const u = ctx.unit;
  const line = lastDependencyFailure(ctx.facts.journal);
  const job = [...(ctx.facts.recentJobs ?? [])].reverse().find((j) => j.unit === ctx.name && j.phase === "finished" && j.result === "dependency");
  const lineMs = line ? line.atUsec / 1000 : null;
  const jobMs = job ? job.atMs : null;
  const atMs = lineMs !== null && jobMs !== null ? Math.max(lineMs, jobMs) : (lineMs ?? jobMs);
  if (atMs === null) return null;
  // Only if nothing started since: a later start supersedes the old cancelled job.
  const lastStart = lastTransitionInto(ctx.transitions, (to) => to.activeState === "activating" || to.activeState === "active");
  const startedMs = Math.max(lastStart ? lastStart.atUsec / 1000 : 0, usecToMs(u.timestamps.inactiveExitUsec) ?? 0);
  if (startedMs > atMs) return null;
  const evidence: Evidence[] = [stateEvidence(ctx)];
  if (job) evidence.push({ label: "Start job", value: `#${job.jobId} ${job.jobType} finished with result "dependency"`, source: "systemd" });
  if (line) evidence.push(...logEvidence([line]));
  const notStarted = `Not started ${formatDurationWords(ctx.now - atMs)} ago because`;
  const generic: Diagnosis = {
    severity: "critical",
    code: "dependency-failed",
    headline: `${notStarted} a unit it requires failed to start (job result "dependency"); the problem is in that unit, not in this one.`,
    evidence,
    nextStep: { text: "Check the units this one Requires=/BindsTo= (`systemctl list-dependencies`), fix the failed one, then start this one." },
  };

  const checked = ctx.facts.dependencies;
  if (!checked || checked.length === 0) return generic;
  const problems = checked.map(dependencyProblem).filter((p): p is DependencyProblem => p !== null);
  const serious = problems.filter((p) => p.serious);
  const culprits = serious.length > 0 ? serious : problems;
  const unchecked = u.requires.filter((name) => !checked.some((d) => d.name === name));
  const others = checked.filter((d) => !culprits.some((c) => c.dep === d));
  evidence.push(...culprits.map((c) => ({ label: "Requires", value: dependencyValue(c.dep), source: "systemd" as const })));
  if (others.length > 0) {
    evidence.push({
      label: "Other required units",
      value: listWithMore(
        others.map((d) => `${d.name} is ${formatState(d)}`),
        6,
      ),
      source: "systemd",
    });
  }
  if (unchecked.length > 0) evidence.push({ label: "Not checked", value: listWithMore(unchecked, 6), source: "gpudeck" });

  if (culprits.length === 0) {
    // Every unit it requires is fine now: the failed one recovered (or was reset) since.
    if (unchecked.length > 0) return generic;
    return {
      ...generic,
      severity: "warning",
      headline: `${notStarted} a unit it requires failed to start (job result "dependency"); the units it requires are up now (${listWithMore(
        checked.map((d) => d.name),
        3,
      )}), so starting it again should work.`,
      nextStep: { text: "Start it again.", action: { kind: "start", unit: ctx.name } },
    };
  }
  const first = culprits[0].dep;
  const headline =
    culprits.length === 1
      ? `${notStarted} ${first.name}, which it requires, ${culprits[0].phrase}; the problem is in that unit, not in this one.`
      : `${notStarted} units it requires cannot run: ${listWithMore(
          culprits.map((c) => `${c.dep.name} ${c.phrase}`),
          3,
        )}; the problem is in those units, not in this one.`;
  // Only units in the allow-list get a button: reading a dependency's state never widens what
  // the panel may act on.
  const nextStep: NextStep = first.manageable
    ? {
        text: `Open ${first.name}, fix why it ${culprits[0].serious ? "failed" : "is not running"}, then start this one again.`,
        action: { kind: "open-unit", unit: first.name },
      }
    : {
        text: `Check ${first.name} with \`systemctl status ${first.name}\` and \`journalctl -u ${first.name}\` (it is not among this agent's units), fix it, then start this one again.`,
      };
  return { ...generic, headline, nextStep };
}

interface DependencyProblem {
  dep: DependencyState;
  /** failed or cannot load, rather than merely not running */
  serious: boolean;
  /** completes "<name> …" */
  phrase: string;
}

const DEPENDENCY_LOAD_PROBLEMS: Record<string, string> = {
  "not-found": "does not exist (LoadState=not-found)",
  masked: "is masked",
  "bad-setting": "has an invalid unit file (LoadState=bad-setting)",
  error: "could not be loaded (LoadState=error)",
};

/** How a required unit stands in the way now; null when it does not (active, starting …). */
function dependencyProblem(dep: DependencyState): DependencyProblem | null {
  const load = DEPENDENCY_LOAD_PROBLEMS[dep.loadState];
  if (load) return { dep, serious: true, phrase: load };
  if (dep.activeState === "failed") {
    return { dep, serious: true, phrase: dep.result && dep.result !== "success" ? `failed (result ${dep.result})` : "failed" };
  }
  if (dep.activeState === "inactive" || dep.activeState === "deactivating") {
    return { dep, serious: false, phrase: `is ${formatState(dep)}` };
  }
  return null;
}

function dependencyValue(dep: DependencyState): string {
  const parts = [`${dep.name}: ${formatState(dep)}`];
  if (dep.result && dep.result !== "success") parts.push(`result ${dep.result}`);
  if (dep.loadState && dep.loadState !== "loaded") parts.push(`LoadState=${dep.loadState}`);
  if (!dep.manageable) parts.push("not among this agent's units");
  return parts.join(", ");
}

/** "a, b and c" / "a, b, c and 4 more" */
function listWithMore(items: readonly string[], max: number): string {
  const shown = items.slice(0, max);
  const more = items.length - shown.length;
  if (more > 0) return `${shown.join(", ")} and ${more} more`;
  return shown.length <= 1 ? shown.join("") : `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}

// ---------------------------------------------------------------------------------------
// Active (case 10, and flapping)

function diagnoseActive(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  const activeSince =
    usecToMs(u.timestamps.activeEnterUsec) ??
    (() => {
      const t = lastTransitionInto(ctx.transitions, (to) => to.activeState === "active");
      return t ? t.atUsec / 1000 : null;
    })() ??
    ctx.stateEnteredMs;
  const uptime = activeSince === null ? null : Math.max(0, ctx.now - activeSince);
  const evidence: Evidence[] = [stateEvidence(ctx)];
  if (u.mainProcess) {
    evidence.push({
      label: "Main process",
      value: `PID ${u.mainProcess.pid} (${u.mainProcess.state}): ${processCommandText(u.mainProcess.cmdline, 160)}`,
      source: "proc",
    });
  } else if (u.mainPid > 0) {
    evidence.push({ label: "Main PID", value: String(u.mainPid), source: "systemd" });
  }
  const sample = ctx.facts.gpuNow;
  if (sample) {
    const own = sample.gpus.filter((g) => g.holders.some((h) => h.kind === "unit" && h.unit === ctx.name));
    const mib = own.reduce((s, g) => s + g.holders.filter((h) => h.kind === "unit" && h.unit === ctx.name).reduce((a, h) => a + h.usedMiB, 0), 0);
    if (own.length > 0) evidence.push({ label: "GPU memory", value: `${formatMiBRounded(mib)} on ${formatGpus(own)}`, source: "nvidia-smi" });
  }
  evidence.push(...restartCountEvidence(ctx));

  const recent = restartHistory(ctx, FLAPPING_WINDOW_MS);
  if (recent.observed >= 2 && uptime !== null && uptime < FLAPPING_WINDOW_MS / 5) {
    const f = lastFailure(ctx);
    return {
      severity: "warning",
      code: "crash-loop",
      headline: `Running for ${formatDurationWords(uptime)}, but it ${restartsPhrase(ctx, recent)} (last failure: ${f.summary}); it may be crash-looping.`,
      evidence: [...evidence, ...f.evidence.filter((e) => e.label !== "State"), ...restartPolicyEvidence(ctx)],
    };
  }

  if (u.subState === "exited") {
    return {
      severity: "ok",
      code: "healthy",
      headline: `Ran successfully${activeSince !== null ? ` ${ago(ctx, activeSince)}` : ""} and stays active (RemainAfterExit=yes); nothing to do.`,
      evidence,
    };
  }
  const running = u.subState === "running";
  const forText = uptime !== null ? ` for ${formatDurationWords(uptime)}${activeSince !== null ? ` (since ${formatTimestamp(activeSince)})` : ""}` : "";
  return {
    severity: "ok",
    code: "healthy",
    headline: running ? `Running normally${forText}.` : `Active (${u.subState})${forText}; nothing wrong.`,
    evidence,
  };
}

// ---------------------------------------------------------------------------------------
// Activating (cases 1–3 and plain start phases)

function diagnoseActivating(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  switch (u.subState) {
    case "auto-restart":
      return crashLoopCycling(ctx);
    case "start-pre":
    case "condition":
      return waitingForGpuCase.diagnose(ctx) ?? startPreRunningCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
    case "start":
    case "start-post":
      return startPhaseCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
    default:
      return unknownStateCase.diagnose(ctx);
  }
}

// ---------------------------------------------------------------------------------------
// Deactivating (case 9)

function diagnoseDeactivating(ctx: Ctx): Diagnosis {
  const u = ctx.unit;
  const entered = ctx.stateEnteredMs;
  const inState = entered === null ? null : ctx.now - entered;
  const evidence: Evidence[] = [stateEvidence(ctx)];
  const main = u.mainProcess ?? u.processes.find((p) => p.pid === u.mainPid) ?? u.processes[0] ?? null;
  if (main) evidence.push({ label: "Process", value: `PID ${main.pid} (${main.state}): ${processCommandText(main.cmdline, 160)}`, source: "proc" });
  if (u.processes.length > 1) evidence.push({ label: "Processes left", value: String(u.processes.length), source: "proc" });
  const stopSetting = formatUsecSetting(u.timeoutStopUsec);
  evidence.push({ label: "TimeoutStopSec", value: stopSetting, source: "systemd" });

  // Why it is stopping, when a start timed out or failed.
  let cause = "";
  if (u.result && u.result !== "success") {
    const point = ctx.failurePoint;
    const lastDeactivate = lastTransitionInto(ctx.transitions, (to) => to.activeState === "deactivating" && to.subState === u.subState);
    const phase = lastDeactivate ? kindOfPhase(lastDeactivate.from) : point ? kindOfPhase(point.phase) : "unknown";
    const phaseName = phase === "start-pre" ? "in ExecStartPre" : phase === "start" ? "in ExecStart" : phase === "start-post" ? "in ExecStartPost" : "";
    cause = u.result === "timeout" ? `Start timed out${phaseName ? ` ${phaseName}` : ""}; ` : `Failed (Result=${u.result}); `;
    evidence.push({ label: "Result", value: u.result, source: "systemd" });
  }
  const who = main ? `PID ${main.pid}${main.cmdline.length > 0 ? ` (${main.cmdline[0].split("/").pop()})` : ""}` : "the unit's processes";
  const dState = main?.state === "uninterruptible";
  const dNote = dState ? "; it is in D state (uninterruptible, often a GPU driver wait), which even SIGKILL cannot end until the kernel call returns" : "";
  const hasStopTimeout = hasTimeout(u.timeoutStopUsec);
  const deadline = entered !== null && hasStopTimeout ? entered + u.timeoutStopUsec / 1000 : null;
  const left = deadline === null ? null : deadline - ctx.now;

  if (u.subState === "stop-sigterm" || u.subState === "final-sigterm") {
    const forText = inState !== null ? ` ${formatDurationWords(inState)} ago` : "";
    const killText = !hasStopTimeout
      ? "; no SIGKILL will follow (TimeoutStopSec=infinity)"
      : left === null
        ? `; SIGKILL follows after TimeoutStopSec=${stopSetting}`
        : left >= 0
          ? `; systemd sends SIGKILL in ${formatDurationWords(left)}`
          : `; SIGKILL was due ${formatDurationWords(left)} ago`;
    const stuck = inState === null || inState >= STOP_STUCK_AFTER_MS;
    if (!stuck) {
      return {
        severity: "info",
        code: "stopping",
        headline: `${cause}Stopping: SIGTERM sent${forText}, waiting for ${who} to exit${killText}.`,
        evidence,
        etaMs: left !== null && left >= 0 ? left : undefined,
      };
    }
    return {
      severity: !hasStopTimeout || (left !== null && left < 0) || dState ? "critical" : "warning",
      code: "stop-stuck",
      headline: `${cause}Stop stuck: ${who} ${main ? "has" : "have"} ignored SIGTERM for ${formatDurationWords(inState ?? 0)}${killText}${dNote}.`,
      evidence,
      nextStep: {
        text: hasStopTimeout
          ? `Wait for SIGKILL${left !== null && left >= 0 ? ` in ${formatDurationWords(left)}` : ""}, or kill it now (\`systemctl kill -s SIGKILL ${ctx.name}\`).`
          : `Kill it (\`systemctl kill -s SIGKILL ${ctx.name}\`); consider a finite TimeoutStopSec=.`,
      },
      etaMs: left !== null && left >= 0 ? left : undefined,
    };
  }
  if (u.subState === "stop-sigkill" || u.subState === "final-sigkill") {
    return {
      severity: "critical",
      code: "stop-stuck",
      headline: `${cause}Stop stuck: SIGKILL sent ${formatDurationWords(inState ?? 0)} ago but ${who} is still there${dNote || "; it is probably stuck in the kernel (D state)"}.`,
      evidence,
      nextStep: { text: "Check the process state (`ps -o pid,stat,wchan -p …`) and dmesg for GPU driver errors (Xid); a reboot may be needed." },
      etaMs: left !== null && left >= 0 ? left : undefined,
    };
  }
  // stop (ExecStop), stop-post (ExecStopPost), stop-watchdog …
  const control = controlCommand(ctx);
  const cmd = control.argv ? `: ${quote(formatCmdline(control.argv, 120))}` : "";
  const label = u.subState === "stop" ? "ExecStop" : u.subState === "stop-post" ? "ExecStopPost" : formatState(u);
  const slow = inState !== null && inState >= STOP_STUCK_AFTER_MS;
  const nextSignal =
    left === null ? "" : left >= 0 ? `; systemd moves on (SIGTERM) in ${formatDurationWords(left)}` : `; its timeout passed ${formatDurationWords(left)} ago`;
  return {
    severity: slow ? "warning" : "info",
    code: "stopping",
    headline: `${cause}Stopping: ${label} running for ${formatDurationWords(inState ?? 0)}${cmd}${nextSignal}.`,
    evidence,
    etaMs: left !== null && left >= 0 ? left : undefined,
  };
}
