/**
 * A unit in activating/start-pre (or condition): what its control process runs, since when,
 * its start deadline, and whether it waits for GPU memory. Shared by the waiting-for-GPU cases
 * and the plain start-pre case, so it is analysed once per call.
 */
import type { Evidence } from "../contract/diagnosis";
import { formatCmdline, formatDurationWords } from "../contract/format";
import { perCall, type DiagnosisContext } from "./context";
import { restartCountEvidence, stateEvidence } from "./evidence";
import { MIN_CONTENTION_MIB, type GpuContention } from "./gpu";
import { gpuContention, sumMiB } from "./gpuEvidence";
import { controlCommand, pollsNvidiaSmi, type ControlCommand } from "./processes";
import { startDeadlineMs, timeoutStartEvidence } from "./startDeadline";

export interface StartPreWait {
  control: ControlCommand;
  phaseLabel: "ExecStartPre" | "ExecCondition";
  /** How long the current command has run; null = unknown. */
  runningFor: number | null;
  deadline: number | null;
  cmdText: string | null;
  /** State, the command, TimeoutStartSec and restarts: the evidence both cases open with. */
  baseEvidence: readonly Evidence[];
  contention: GpuContention | null;
  /** MiB this unit's own exited processes still hold on its GPUs. */
  ownExitedMiB: number;
  /** Polling nvidia-smi was not seen, but is assumed because the unit's own memory is still held. */
  inferred: boolean;
  /** It polls nvidia-smi (seen or inferred). */
  polls: boolean;
  /** It polls and enough GPU memory is held to be what it waits for. */
  waitsForGpu: boolean;
}

export function inStartPre(ctx: DiagnosisContext): boolean {
  const u = ctx.unit;
  return u.activeState === "activating" && (u.subState === "start-pre" || u.subState === "condition");
}

export const startPreWait = perCall((ctx): StartPreWait => {
  const u = ctx.unit;
  const control = controlCommand(ctx);
  const phaseLabel = u.subState === "condition" ? "ExecCondition" : "ExecStartPre";
  const runningSince = control.startedAtMs !== null && control.startedAtMs <= ctx.now ? control.startedAtMs : ctx.stateEnteredMs;
  const runningFor = runningSince === null ? null : ctx.now - runningSince;
  const deadline = startDeadlineMs(ctx);
  const cmdText = control.argv ? formatCmdline(control.argv, 120) : null;
  const baseEvidence: Evidence[] = [
    stateEvidence(ctx),
    {
      label: phaseLabel,
      value: `${control.pid > 0 ? `PID ${control.pid}` : "PID unknown"}${runningFor !== null ? `, running ${formatDurationWords(runningFor)}` : ""}: ${cmdText ?? "command line unknown"}`,
      source: control.fromProc ? "proc" : "systemd",
    },
    timeoutStartEvidence(ctx, deadline),
    ...restartCountEvidence(ctx),
  ];
  const seenPolling = pollsNvidiaSmi(ctx, control.argv);
  const contention = gpuContention(ctx, control.argv);
  // A script that polls nvidia-smi shows it only while its nvidia-smi child runs, a fraction of
  // each poll. Memory that this unit's own previous run still holds on its GPUs is what a
  // restart waits for either way, so it counts without catching the poll in the act.
  const ownExitedMiB = contention ? sumMiB(contention.exited.filter((g) => g.unit === ctx.name)) : 0;
  const inferred = !seenPolling && ownExitedMiB >= MIN_CONTENTION_MIB;
  const polls = seenPolling || inferred;
  const waitsForGpu = polls && contention !== null && contention.totalHeldMiB >= MIN_CONTENTION_MIB;
  return { control, phaseLabel, runningFor, deadline, cmdText, baseEvidence, contention, ownExitedMiB, inferred, polls, waitsForGpu };
});
