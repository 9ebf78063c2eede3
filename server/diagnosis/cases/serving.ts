/**
 * Running is not serving: an active unit whose engine still loads (the stage and since when, as
 * the engine's log says, and the durations it reported; no figures of our own), whose endpoint
 * stops answering, or whose engine logged a fatal error; and a failed unit whose engine said why
 * in its own words ("CUDA out of memory while allocating the KV cache on GPU 3"). The agent's
 * readiness (facts.readiness) carries all of it.
 */
import type { Diagnosis, Evidence, NextStep } from "../../contract/diagnosis";
import { formatClock, formatDurationWords, formatTimestamp, truncate } from "../../contract/format";
import type { EngineKind, Readiness } from "../../contract/readiness";
import type { DiagnosisCase } from "../case";
import { usecToMs, type DiagnosisContext } from "../context";
import { ago, capitalize, quote, stateEvidence } from "../evidence";
import { lastFailure } from "../lastFailure";

export const ENGINE_NAMES: Record<EngineKind, string> = { vllm: "vLLM", sglang: "SGLang", "llama.cpp": "llama.cpp", ollama: "Ollama", tgi: "TGI" };

/** An active unit, after the flapping case: loading, not serving or failed; serving (healthy, with its models). */
export const servingCase: DiagnosisCase = {
  id: "serving",
  codes: ["engine-loading", "engine-not-serving", "engine-failed", "healthy"],
  diagnose(ctx) {
    const r = ctx.facts.readiness;
    if (ctx.unit.activeState !== "active" || !r?.engine) return null;
    switch (r.state) {
      case "loading":
        return loading(ctx, r, r.engine);
      case "not-serving":
        return notServing(ctx, r, r.engine);
      case "failed":
        return activeButFailed(ctx, r, r.engine);
      case "serving":
        return serving(ctx, r, r.engine);
      default:
        return null;
    }
  },
};

/** A failed unit whose engine logged why, after the start-limit and timeout cases. */
export const engineFailedCase: DiagnosisCase = {
  id: "engine-failed",
  codes: ["engine-failed"],
  diagnose(ctx) {
    const r = ctx.facts.readiness;
    if (ctx.unit.activeState !== "failed" || !r?.engine || r.state !== "failed" || !r.reason) return null;
    const f = lastFailure(ctx);
    const when = f.atMs !== null ? ` ${ago(ctx, f.atMs)}` : "";
    const logged = r.line ? `, as ${ENGINE_NAMES[r.engine]} logged at ${formatClock(r.line.atMs)}` : "";
    return {
      severity: "critical",
      code: "engine-failed",
      headline: `Failed${when}: ${r.reason}${logged}; then ${f.summary}.`,
      evidence: [stateEvidence(ctx), ...readinessEvidence(r, r.engine), ...f.evidence.filter((e) => e.label !== "State")],
      nextStep: failureStep(ctx, r, "start"),
    };
  },
};

function activeFor(ctx: DiagnosisContext): string {
  const since = usecToMs(ctx.unit.timestamps.activeEnterUsec) ?? ctx.stateEnteredMs;
  return since === null ? "Active" : `Active for ${formatDurationWords(Math.max(0, ctx.now - since))}`;
}

function loading(ctx: DiagnosisContext, r: Readiness, engine: EngineKind): Diagnosis {
  const name = ENGINE_NAMES[engine];
  const progress = r.progress ? ` ${r.progress.done}/${r.progress.total}` : "";
  const stageSince = r.stageSinceMs ?? r.sinceMs;
  let what: string;
  if (r.stage === null || r.stage === "starting") {
    const probe =
      r.probe && !r.probe.ok
        ? `; its endpoint: ${probeText(r)}${engine === "vllm" && r.probe.status === null ? " (vLLM listens only once it is ready)" : ""}`
        : "";
    what = `${name} has logged no load stage yet${probe}`;
  } else {
    what = `${r.stage}${progress} since ${formatClock(stageSince)} (${formatDurationWords(Math.max(0, ctx.now - stageSince))})`;
  }
  const reported = (r.timings ?? []).map((t) => `${t.stage} took ${round(t.seconds)} s`);
  const so = reported.length > 0 ? ` So far ${name} reported: ${reported.join(", ")}.` : "";
  const unprobed = r.reason && !r.probe ? ` Not probed: ${r.reason}.` : "";
  return {
    severity: "info",
    code: "engine-loading",
    headline: `${activeFor(ctx)} but not serving yet: ${what}.${so}${unprobed}`,
    evidence: [stateEvidence(ctx), ...readinessEvidence(r, engine)],
    nextStep: {
      text: `Nothing to do while it loads: it serves once ${r.probe ? `${pathOf(r.probe.url)} answers` : `${name} logs that it is ready`}. The timeline's readiness lane shows each stage.`,
    },
  };
}

function notServing(ctx: DiagnosisContext, r: Readiness, engine: EngineKind): Diagnosis {
  const reason = r.reason ?? (r.probe ? probeText(r) : "its endpoint does not answer");
  return {
    severity: "warning",
    code: "engine-not-serving",
    headline: `${activeFor(ctx)} but not serving since ${formatTimestamp(r.sinceMs)} (${ago(ctx, r.sinceMs)}): ${reason}.`,
    evidence: [stateEvidence(ctx), ...readinessEvidence(r, engine)],
    nextStep: {
      text: `Read ${ENGINE_NAMES[engine]}'s log (journal) from ${formatClock(r.sinceMs)} on for why its endpoint stopped answering; restart it if it does not recover.`,
      action: { kind: "restart", unit: ctx.name },
    },
  };
}

function activeButFailed(ctx: DiagnosisContext, r: Readiness, engine: EngineKind): Diagnosis {
  const logged = r.line ? ` (${ENGINE_NAMES[engine]} logged it at ${formatClock(r.line.atMs)})` : "";
  return {
    severity: "critical",
    code: "engine-failed",
    headline: `${activeFor(ctx)} but not serving: ${r.reason ?? "the engine logged a fatal error"}${logged}.`,
    evidence: [stateEvidence(ctx), ...readinessEvidence(r, engine)],
    nextStep: failureStep(ctx, r, "restart"),
  };
}

function serving(ctx: DiagnosisContext, r: Readiness, engine: EngineKind): Diagnosis {
  const models = r.models.length > 0 ? ` ${r.models.slice(0, 3).join(", ")}${r.models.length > 3 ? ` and ${r.models.length - 3} more` : ""}` : "";
  return {
    severity: "ok",
    code: "healthy",
    headline: `Serving${models} (${ENGINE_NAMES[engine]}) since ${formatTimestamp(r.sinceMs)} (${ago(ctx, r.sinceMs)}); ${activeFor(ctx).toLowerCase()}.`,
    evidence: [stateEvidence(ctx), ...readinessEvidence(r, engine)],
  };
}

function failureStep(ctx: DiagnosisContext, r: Readiness, action: "start" | "restart"): NextStep {
  const reason = r.reason ?? "";
  const again = action === "start" ? "start it again" : "restart it";
  let text = `Read ${r.engine ? ENGINE_NAMES[r.engine] : "the engine"}'s log around that line, fix the cause, then ${again}.`;
  if (/out of memory|KV cache|GPU memory/i.test(reason)) {
    text = `Free GPU memory on its GPUs (the GPU page shows who holds it), or ask for less (--gpu-memory-utilization, --max-model-len, a smaller batch), then ${again}.`;
  } else if (/not found/i.test(reason)) text = `Check the model path or name in ExecStart (and that the file system holding it is mounted), then ${again}.`;
  else if (/no GPU|library=cpu/i.test(reason)) text = `Check that the NVIDIA driver works (\`nvidia-smi\`), then ${again} so that it finds the GPUs.`;
  return { text, action: { kind: action, unit: ctx.name } };
}

export function readinessEvidence(r: Readiness, engine: EngineKind): Evidence[] {
  const out: Evidence[] = [];
  const stage = r.stage ? ` · ${r.stage}${r.progress ? ` ${r.progress.done}/${r.progress.total}` : ""}` : "";
  out.push({ label: "Readiness", value: `${r.state}${stage} (${ENGINE_NAMES[engine]}) since ${formatClock(r.sinceMs)}`, source: "gpudeck" });
  if (r.probe) out.push({ label: "Probe", value: `GET ${r.probe.url}: ${probeOutcome(r)} at ${formatClock(r.probe.atMs)}`, source: "gpudeck" });
  if (r.line) out.push({ label: `Log ${formatClock(r.line.atMs)}`, value: truncate(r.line.text, 240), source: "journal" });
  if ((r.timings ?? []).length > 0) {
    out.push({ label: "Reported by the engine", value: (r.timings ?? []).map((t) => `${t.stage} ${round(t.seconds)} s`).join(", "), source: "journal" });
  }
  if (r.models.length > 0) out.push({ label: "Models", value: r.models.join(", "), source: "gpudeck" });
  if (r.reason && r.state !== "loading") out.push({ label: capitalize(r.state === "failed" ? "error" : "reason"), value: quote(r.reason), source: "gpudeck" });
  return out;
}

/** "127.0.0.1:8000/health answered 503 "Loading model"", "127.0.0.1:8000/health: connection refused" */
function probeText(r: Readiness): string {
  const p = r.probe!;
  return p.status !== null ? `${pathOf(p.url)} ${probeOutcome(r)}` : `${pathOf(p.url)}: ${probeOutcome(r)}`;
}

function probeOutcome(r: Readiness): string {
  const p = r.probe!;
  if (p.ok) return `${p.status} OK`;
  return p.status !== null ? `answered ${p.status}${p.detail ? ` "${p.detail}"` : ""}` : (p.detail ?? "no answer");
}

function pathOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return url;
  }
}

const round = (s: number): string => (s >= 10 ? String(Math.round(s)) : s.toFixed(1));
