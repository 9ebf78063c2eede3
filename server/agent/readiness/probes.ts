/**
 * Asking an engine whether it serves, the way each engine answers: vLLM `/health` (it does not
 * listen at all while loading: connection refused is normal), SGLang `/health` (503 until
 * warm-up is done), llama.cpp `/health` (503 `{"error":{"message":"Loading model"}}`), Ollama
 * `/api/version` (+ `/api/ps`: loaded models and their VRAM), TGI `/health`; then the model
 * names (`/v1/models`, `/api/ps`, TGI `/info`). Transport is the EngineHttp adapter.
 */
import type { EngineKind } from "../../contract/readiness";
import type { EngineHttp, EngineHttpResponse } from "../adapter";
import type { ProbeOutcome } from "./tracker";

const HEALTH_PATH: Record<EngineKind, string> = {
  vllm: "/health",
  sglang: "/health",
  "llama.cpp": "/health",
  ollama: "/api/version",
  tgi: "/health",
};

const MODELS_PATH: Record<EngineKind, string> = {
  vllm: "/v1/models",
  sglang: "/v1/models",
  "llama.cpp": "/v1/models",
  ollama: "/api/ps",
  tgi: "/info",
};

const BODY_LIMIT = 256 * 1024;

export interface ProbeRequest {
  unit: string;
  engine: EngineKind;
  /** the engine's base URL (http://127.0.0.1:8000); null when only `probeUrl` is known */
  baseUrl: string | null;
  /** an explicit health URL (config); 2xx = serving */
  probeUrl?: string;
  /** also ask for the model names */
  wantModels: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
  nowMs: () => number;
}

export async function probeEngine(http: EngineHttp, req: ProbeRequest): Promise<ProbeOutcome> {
  const url = req.probeUrl ?? `${req.baseUrl}${HEALTH_PATH[req.engine]}`;
  const res = await http.get({ unit: req.unit, url, timeoutMs: req.timeoutMs, signal: req.signal, maxBytes: BODY_LIMIT });
  const atMs = req.nowMs();
  if (res.kind !== "response") return { probe: { url, ok: false, status: null, atMs, detail: transportWords(res, req.timeoutMs) } };
  const ok = res.status >= 200 && res.status < 300;
  const detail = ok ? undefined : errorText(res.body);
  const loading = !ok && res.status === 503;
  const outcome: ProbeOutcome = { probe: { url, ok, status: res.status, atMs, ...(detail ? { detail } : {}) }, loading };
  if (!ok || !req.wantModels) return outcome;
  const base = req.baseUrl ?? new URL(url).origin;
  const models = await http.get({
    unit: req.unit,
    url: `${base}${MODELS_PATH[req.engine]}`,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    maxBytes: BODY_LIMIT,
  });
  if (models.kind === "response" && models.status === 200) Object.assign(outcome, modelsOf(req.engine, models.body));
  return outcome;
}

function transportWords(res: Exclude<EngineHttpResponse, { kind: "response" }>, timeoutMs: number): string {
  if (res.kind === "refused") return "connection refused";
  if (res.kind === "timeout") return `no answer within ${timeoutMs / 1000} s`;
  return res.message;
}

/** The engine's own error message ("Loading model"), short; else the start of the body. */
export function errorText(body: string): string | undefined {
  const json = parseJson(body) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown } | null;
  const candidates = [
    typeof json?.error === "object" ? json.error?.message : json?.error,
    json?.message,
    json?.detail,
    json === null ? body.trim().split("\n")[0] : undefined,
  ];
  const text = candidates.find((c): c is string => typeof c === "string" && c.trim() !== "");
  return text ? text.trim().slice(0, 120) : undefined;
}

/** Model names (and Ollama's VRAM per model) from the engine's models endpoint. */
export function modelsOf(engine: EngineKind, body: string): { models?: string[]; vramMiB?: Record<string, number> } {
  const json = parseJson(body) as Record<string, unknown> | null;
  if (!json) return {};
  if (engine === "ollama") {
    const list = Array.isArray(json.models) ? (json.models as Record<string, unknown>[]) : [];
    const models: string[] = [];
    const vramMiB: Record<string, number> = {};
    for (const m of list.slice(0, 50)) {
      const name = typeof m.name === "string" ? m.name : typeof m.model === "string" ? m.model : null;
      if (!name) continue;
      models.push(name);
      if (typeof m.size_vram === "number" && Number.isFinite(m.size_vram)) vramMiB[name] = Math.round(m.size_vram / (1024 * 1024));
    }
    return { models, vramMiB };
  }
  if (engine === "tgi") return typeof json.model_id === "string" ? { models: [json.model_id] } : {};
  const data = Array.isArray(json.data) ? (json.data as Record<string, unknown>[]) : [];
  return { models: data.flatMap((m) => (typeof m.id === "string" ? [m.id] : [])).slice(0, 50) };
}

/** The engine's Prometheus text, or null when it has none or did not answer. */
export async function scrapeMetricsText(
  http: EngineHttp,
  req: { unit: string; baseUrl: string; timeoutMs: number; signal?: AbortSignal },
): Promise<{ text: string } | { missing: true } | null> {
  const res = await http.get({ unit: req.unit, url: `${req.baseUrl}/metrics`, timeoutMs: req.timeoutMs, signal: req.signal, maxBytes: 8 * 1024 * 1024 });
  if (res.kind !== "response") return null;
  if (res.status === 404 || res.status === 501) return { missing: true };
  return res.status === 200 ? { text: res.body } : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
