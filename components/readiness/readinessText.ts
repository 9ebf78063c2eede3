/**
 * Whether the engine under a unit serves, in words for the unit lists and the unit header:
 * "loading weights 37/119 · 2 min 10 s · ready in about 3 min" (from the unit's last starts; "taking
 * longer than usual" once that time has passed), "serving /models/kimi-k2.5", "not serving: connection
 * refused · 40 s", "engine failed: CUDA out of memory". Pure, so the 3 a.m. wording is tested.
 */
import { formatDuration, truncate } from "@/server/contract/format";
import { readyEstimateWords, type EngineKind, type Readiness, type ReadinessState } from "@/server/contract/readiness";

/** ok: serving; busy: loading; warn: running but not answering; bad: the engine failed. */
export type ReadinessTone = "ok" | "busy" | "warn" | "bad";

export interface ReadinessText {
  state: Exclude<ReadinessState, "unknown">;
  text: string;
  tone: ReadinessTone;
}

const ENGINE_NAME: Record<EngineKind, string> = { vllm: "vLLM", sglang: "SGLang", "llama.cpp": "llama.cpp", ollama: "Ollama", tgi: "TGI" };

export function engineName(engine: EngineKind | null): string {
  return engine ? ENGINE_NAME[engine] : "engine";
}

/** "37/119" of the current stage, when the engine printed it. */
export function progressText(progress: Readiness["progress"]): string {
  return progress ? `${progress.done}/${progress.total}` : "";
}

/** "/models/kimi-k2.5, qwen3" (the first three, then "+2 more"). */
export function modelsText(models: readonly string[]): string {
  if (models.length <= 3) return models.join(", ");
  return `${models.slice(0, 3).join(", ")} +${models.length - 3} more`;
}

/** null when nothing is known (stopped, no engine recognised, an agent without readiness): show nothing, not a guess. */
export function readinessText(r: Readiness | undefined, nowMs: number): ReadinessText | null {
  if (!r || r.state === "unknown") return null;
  const since = formatDuration(nowMs - r.sinceMs);
  const reason = r.reason ? truncate(r.reason, 140) : null;
  switch (r.state) {
    case "loading": {
      const stage = r.stage ?? "loading";
      const progress = progressText(r.progress);
      const eta = readyEstimateWords(r, nowMs);
      return { state: r.state, tone: "busy", text: `${stage}${progress ? ` ${progress}` : ""} · ${since}${eta ? ` · ${eta}` : ""}` };
    }
    case "serving":
      // a warning (Ollama on the CPU) is shown beside serving, never instead of it
      return {
        state: r.state,
        tone: r.warning ? "warn" : "ok",
        text: `${r.models.length > 0 ? `serving ${modelsText(r.models)}` : "serving"}${r.warning ? ` · warning: ${truncate(r.warning, 120)}` : ""}`,
      };
    case "not-serving":
      return { state: r.state, tone: "warn", text: `not serving${reason ? `: ${reason}` : ""} · ${since}` };
    case "failed":
      return { state: r.state, tone: "bad", text: `${engineName(r.engine)} failed${reason ? `: ${reason}` : ""}` };
  }
}

/** Running but not answering requests yet (or any more): these sort with the starting units. */
export function runningButNotServing(r: Readiness | undefined): boolean {
  return r?.state === "loading" || r?.state === "not-serving";
}
