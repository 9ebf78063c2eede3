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
import type { DiagnosisFacts } from "./types";
import type { Diagnosis, Evidence } from "../contract/diagnosis";
import { formatCmdline, formatDurationWords, formatGpus, formatMiBRounded, formatState, formatTimestamp, formatUsecSetting } from "../contract/format";
import { loadStateCase, unitNotKnown } from "./cases/loadState";
import { maintenanceCase, reloadingCase, startQueuedCase, stoppedCase, unknownStateCase } from "./cases/quietStates";
import { startPhaseCase, startPreRunningCase } from "./cases/startPhases";
import { waitingForGpuCase } from "./cases/waitingForGpu";
import { restartCycleCase, startLimitCase } from "./cases/crashLoop";
import { dependencyFailedCase } from "./cases/dependencyFailed";
import { failedCase } from "./cases/failed";
import { timeoutCase } from "./cases/timeouts";
import { buildContext, usecToMs, type DiagnosisContext } from "./context";
import { ago, quote, restartCountEvidence, stateEvidence } from "./evidence";
import { lastTransitionInto } from "./history";
import { kindOfPhase, lastFailure } from "./lastFailure";
import { controlCommand, processCommandText } from "./processes";
import { restartHistory, restartPolicyEvidence, restartsPhrase } from "./restarts";
import { hasTimeout } from "./startDeadline";

export { gpusUsedByUnit } from "./gpu";
export { DIAGNOSIS_CODES } from "../contract/diagnosis";
export type { DependencyState, DiagnosisFacts } from "./types";
export type { Diagnosis, DiagnosisCode, DiagnosisSeverity, Evidence, NextStep } from "../contract/diagnosis";
export { GPU_SAMPLE_STALE_MS } from "./gpuEvidence";
export { execArgv } from "./processes";
export { SOON_AFTER_ACTIVE_MS } from "./cases/failed";

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
      return restartCycleCase.diagnose(ctx) ?? unknownStateCase.diagnose(ctx);
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

function diagnoseFailed(ctx: Ctx): Diagnosis {
  return (
    restartCycleCase.diagnose(ctx) ??
    dependencyFailedCase.diagnose(ctx) ??
    startLimitCase.diagnose(ctx) ??
    timeoutCase.diagnose(ctx) ??
    failedCase.diagnose(ctx) ??
    unknownStateCase.diagnose(ctx)
  );
}

function diagnoseInactive(ctx: Ctx): Diagnosis {
  return (
    restartCycleCase.diagnose(ctx) ??
    dependencyFailedCase.diagnose(ctx) ??
    startQueuedCase.diagnose(ctx) ??
    stoppedCase.diagnose(ctx) ??
    unknownStateCase.diagnose(ctx)
  );
}
