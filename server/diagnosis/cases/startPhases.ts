/**
 * A start in progress that is not waiting for GPU memory: an ExecStartPre/ExecCondition
 * running, the main process not yet ready (activating/start), or ExecStartPost running.
 */
import type { Diagnosis, Evidence } from "../../contract/diagnosis";
import { formatCmdline, formatDurationWords, formatGpus } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import { sinceState, type DiagnosisContext } from "../context";
import { quote, restartCountEvidence, stateEvidence } from "../evidence";
import { describeGpuSet, gpuSampleEvidence, memoryEvidence } from "../gpuEvidence";
import { controlCommand, processCommandText } from "../processes";
import { startDeadlineMs, timeoutClause, timeoutStartEvidence } from "../startDeadline";
import { inStartPre, startPreWait } from "../startPre";

/** After the waiting-for-GPU case: the same phase, when no GPU memory is what it waits for. */
export const startPreRunningCase: DiagnosisCase = {
  id: "start-pre-running",
  codes: ["start-pre-running"],
  diagnose: (ctx) => (inStartPre(ctx) ? startPreRunning(ctx) : null),
};

export const startPhaseCase: DiagnosisCase = {
  id: "start-phase",
  codes: ["start-running", "start-post-running"],
  diagnose(ctx) {
    const u = ctx.unit;
    return u.activeState === "activating" && (u.subState === "start" || u.subState === "start-post") ? diagnoseStartPhase(ctx) : null;
  },
};

function startPreRunning(ctx: DiagnosisContext): Diagnosis {
  const { baseEvidence, contention, deadline, polls, runningFor, phaseLabel, cmdText } = startPreWait(ctx);
  const evidence = [...baseEvidence];
  const left = deadline === null ? null : deadline - ctx.now;
  let gpuNote = "";
  if (polls) {
    evidence.push(...gpuSampleEvidence(ctx));
    if (!contention) gpuNote = "; it polls nvidia-smi, but gpudeck has no GPU data to tell what it waits for";
    else {
      evidence.push({ label: "GPUs", value: describeGpuSet(contention), source: "gpudeck" }, memoryEvidence(contention));
      gpuNote = `; it polls nvidia-smi and ${formatGpus(contention.gpus)} ${contention.gpus.length === 1 ? "holds" : "hold"} no memory, so it should finish shortly`;
    }
  }
  const forText = runningFor !== null ? ` for ${formatDurationWords(runningFor)}` : "";
  const timeout = timeoutClause(ctx, deadline, null);
  return {
    severity: left !== null && left < 0 ? "warning" : "info",
    code: "start-pre-running",
    headline: `${phaseLabel} running${forText}: ${quote(cmdText ?? "command unknown")}${gpuNote}${timeout}.`,
    evidence,
    etaMs: left !== null && left >= 0 ? left : undefined,
  };
}

function diagnoseStartPhase(ctx: DiagnosisContext): Diagnosis {
  const u = ctx.unit;
  const deadline = startDeadlineMs(ctx);
  const left = deadline === null ? null : deadline - ctx.now;
  const forText = ` for ${formatDurationWords(sinceState(ctx))}`;
  const evidence: Evidence[] = [stateEvidence(ctx), timeoutStartEvidence(ctx, deadline), ...restartCountEvidence(ctx)];
  let headline: string;
  if (u.subState === "start") {
    const main = u.mainProcess ? `PID ${u.mainProcess.pid}` : u.mainPid > 0 ? `PID ${u.mainPid}` : "the main process";
    if (u.mainProcess)
      evidence.push({
        label: "Main process",
        value: `PID ${u.mainProcess.pid} (${u.mainProcess.state}): ${processCommandText(u.mainProcess.cmdline, 160)}`,
        source: "proc",
      });
    headline = `Started${forText}: waiting for ${main} to report ready (Type=notify/forking)${timeoutClause(ctx, deadline, null)}.`;
  } else {
    const control = controlCommand(ctx);
    if (control.argv) evidence.push({ label: "ExecStartPost", value: `PID ${control.pid}: ${formatCmdline(control.argv, 160)}`, source: "proc" });
    headline = `ExecStartPost running${forText}${control.argv ? `: ${quote(formatCmdline(control.argv, 120))}` : ""}${timeoutClause(ctx, deadline, null)}.`;
  }
  return {
    severity: left !== null && left < 0 ? "warning" : "info",
    code: u.subState === "start" ? "start-running" : "start-post-running",
    headline,
    evidence,
    etaMs: left !== null && left >= 0 ? left : undefined,
  };
}
