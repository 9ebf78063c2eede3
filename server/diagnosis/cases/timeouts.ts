/**
 * Case 5: a final failure with Result=timeout, and in which phase: a start phase ran past
 * TimeoutStartSec= (start-timeout), or stopping ran past TimeoutStopSec= (stop-timeout).
 */
import type { Evidence } from "../../contract/diagnosis";
import { formatGpus, formatMiBRounded } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import type { DiagnosisContext } from "../context";
import { MIN_CONTENTION_MIB } from "../gpu";
import { gpuContention, holderEvidence, holderPhrase, memoryEvidence } from "../gpuEvidence";
import { failedWhen, finalFailureDiagnosis, lastFailure } from "../lastFailure";

/** After the restart-cycle, dependency and start-limit cases, which explain a failed state first. */
export const timeoutCase: DiagnosisCase = {
  id: "timeout",
  codes: ["start-timeout", "stop-timeout"],
  diagnose(ctx) {
    if (ctx.unit.activeState !== "failed") return null;
    const f = lastFailure(ctx);
    if (f.result !== "timeout") return null;
    const when = failedWhen(ctx, f);
    if (f.kind === "running" || f.kind === "stop") {
      return finalFailureDiagnosis(ctx, f, "stop-timeout", `Stop timed out${when}: ${f.summary}, so systemd killed it and marked it failed.`);
    }
    const gpu = f.kind === "start-pre" ? gpuStillHeldClause(ctx) : null;
    return finalFailureDiagnosis(
      ctx,
      f,
      "start-timeout",
      `Start timed out${when}: ${f.summary}, so systemd stopped it${gpu ? gpu.clause : ""}.`,
      gpu?.evidence,
    );
  },
};

/** If a start-pre polled nvidia-smi and GPU memory is still held, a clause saying so. */
function gpuStillHeldClause(ctx: DiagnosisContext): { clause: string; evidence: Evidence[] } | null {
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
