/**
 * Cases 4 and 7: a final failure that is not a timeout: ExecStartPre/ExecCondition, ExecStart
 * or ExecStartPost exited non-zero, the main process exited (soon) after becoming active, the
 * OOM killer. The last case of the failed state: it always answers there.
 */
import type { DiagnosisCode } from "../../contract/diagnosis";
import type { DiagnosisCase } from "../case";
import { failedWhen, finalFailureDiagnosis, lastFailure, type Failure } from "../lastFailure";

/** A main process that dies within this long after becoming active "exited soon after start". */
export const SOON_AFTER_ACTIVE_MS = 60_000;

export const failedCase: DiagnosisCase = {
  id: "failed",
  codes: ["start-pre-failed", "start-failed", "start-post-failed", "exited-after-start", "main-exited", "oom-killed", "failed"],
  diagnose(ctx) {
    if (ctx.unit.activeState !== "failed") return null;
    const f = lastFailure(ctx);
    return finalFailureDiagnosis(ctx, f, failureCode(f), `Failed${failedWhen(ctx, f)}: ${f.summary}.`);
  },
};

/** The code of a failure that is not a timeout (the timeout case answers those first). */
function failureCode(f: Failure): DiagnosisCode {
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
