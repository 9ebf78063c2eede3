/**
 * Case 10, an active unit: healthy, unless it restarted several times in the last minutes
 * (flapping: running now, but probably crash-looping).
 */
import type { Evidence } from "../../contract/diagnosis";
import { formatDurationWords, formatGpus, formatMiBRounded, formatTimestamp } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import { perCall, usecToMs } from "../context";
import { ago, restartCountEvidence, stateEvidence } from "../evidence";
import { lastTransitionInto } from "../history";
import { lastFailure } from "../lastFailure";
import { processCommandText } from "../processes";
import { restartHistory, restartPolicyEvidence, restartsPhrase } from "../restarts";

/** Automatic restarts within this window make a running unit "flapping". */
export const FLAPPING_WINDOW_MS = 10 * 60_000;

/** Before the healthy case. */
export const flappingCase: DiagnosisCase = {
  id: "flapping",
  codes: ["crash-loop"],
  diagnose(ctx) {
    if (ctx.unit.activeState !== "active") return null;
    const { uptime, evidence } = activeRun(ctx);
    const recent = restartHistory(ctx, FLAPPING_WINDOW_MS);
    if (!(recent.observed >= 2 && uptime !== null && uptime < FLAPPING_WINDOW_MS / 5)) return null;
    const f = lastFailure(ctx);
    return {
      severity: "warning",
      code: "crash-loop",
      headline: `Running for ${formatDurationWords(uptime)}, but it ${restartsPhrase(ctx, recent)} (last failure: ${f.summary}); it may be crash-looping.`,
      evidence: [...evidence, ...f.evidence.filter((e) => e.label !== "State"), ...restartPolicyEvidence(ctx)],
    };
  },
};

export const healthyCase: DiagnosisCase = {
  id: "healthy",
  codes: ["healthy"],
  diagnose(ctx) {
    const u = ctx.unit;
    if (u.activeState !== "active") return null;
    const { activeSince, uptime, evidence } = activeRun(ctx);
    if (u.subState === "exited") {
      return {
        severity: "ok",
        code: "healthy",
        headline: `Ran successfully${activeSince !== null ? ` ${ago(ctx, activeSince)}` : ""} and stays active (RemainAfterExit=yes); nothing to do.`,
        evidence: [...evidence],
      };
    }
    const running = u.subState === "running";
    const forText = uptime !== null ? ` for ${formatDurationWords(uptime)}${activeSince !== null ? ` (since ${formatTimestamp(activeSince)})` : ""}` : "";
    return {
      severity: "ok",
      code: "healthy",
      headline: running ? `Running normally${forText}.` : `Active (${u.subState})${forText}; nothing wrong.`,
      evidence: [...evidence],
    };
  },
};

/** Since when it is active, and the evidence both active cases open with. */
const activeRun = perCall((ctx): { activeSince: number | null; uptime: number | null; evidence: readonly Evidence[] } => {
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
  return { activeSince, uptime, evidence };
});
