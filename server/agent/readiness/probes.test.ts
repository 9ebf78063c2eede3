import { describe, expect, it } from "vitest";
import type { EngineHttp, EngineHttpRequest, EngineHttpResponse } from "../adapter";
import { errorText, modelsOf, probeEngine, scrapeMetricsText } from "./probes";

/** Answers by path, and records what was asked. */
function engine(answers: Record<string, EngineHttpResponse>): EngineHttp & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async get(req: EngineHttpRequest) {
      asked.push(req.url);
      return answers[new URL(req.url).pathname] ?? { kind: "response", status: 404, body: '{"detail":"Not Found"}' };
    },
  };
}
const ok = (body = "") => ({ kind: "response", status: 200, body }) as const;
const base = { unit: "u.service", timeoutMs: 2000, nowMs: () => 1000 };

describe("probing each engine its own way", () => {
  it("vLLM: refused while loading; then /health and /v1/models", async () => {
    const loading = engine({ "/health": { kind: "refused", message: "connection refused" } });
    expect(await probeEngine(loading, { ...base, engine: "vllm", baseUrl: "http://127.0.0.1:8000", wantModels: true })).toEqual({
      probe: { url: "http://127.0.0.1:8000/health", ok: false, status: null, atMs: 1000, detail: "connection refused" },
    });
    const up = engine({
      "/health": ok(),
      "/v1/models": ok(JSON.stringify({ object: "list", data: [{ id: "meta-llama/Llama-3.1-8B-Instruct", object: "model" }] })),
    });
    const r = await probeEngine(up, { ...base, engine: "vllm", baseUrl: "http://127.0.0.1:8000", wantModels: true });
    expect(r).toMatchObject({ probe: { ok: true, status: 200 }, models: ["meta-llama/Llama-3.1-8B-Instruct"] });
    expect(up.asked).toEqual(["http://127.0.0.1:8000/health", "http://127.0.0.1:8000/v1/models"]);
    const quiet = engine({ "/health": ok() });
    await probeEngine(quiet, { ...base, engine: "vllm", baseUrl: "http://127.0.0.1:8000", wantModels: false });
    expect(quiet.asked).toEqual(["http://127.0.0.1:8000/health"]);
  });

  it("llama.cpp and SGLang: 503 while loading or warming up", async () => {
    const llama = engine({ "/health": { kind: "response", status: 503, body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}' } });
    expect(await probeEngine(llama, { ...base, engine: "llama.cpp", baseUrl: "http://127.0.0.1:8080", wantModels: true })).toEqual({
      probe: { url: "http://127.0.0.1:8080/health", ok: false, status: 503, atMs: 1000, detail: "Loading model" },
      loading: true,
    });
    const sglang = engine({ "/health": { kind: "response", status: 503, body: "" } });
    expect((await probeEngine(sglang, { ...base, engine: "sglang", baseUrl: "http://127.0.0.1:30000", wantModels: true })).loading).toBe(true);
  });

  it("Ollama: /api/version, then the loaded models and their VRAM from /api/ps", async () => {
    const ps = {
      models: [
        { name: "llama3.1:8b", model: "llama3.1:8b", size: 6654289920, size_vram: 6654289920 },
        { name: "qwen3:32b", size_vram: 22548578304 },
      ],
    };
    const o = engine({ "/api/version": ok('{"version":"0.9.2"}'), "/api/ps": ok(JSON.stringify(ps)) });
    const r = await probeEngine(o, { ...base, engine: "ollama", baseUrl: "http://127.0.0.1:11434", wantModels: true });
    expect(r).toMatchObject({
      probe: { ok: true, url: "http://127.0.0.1:11434/api/version" },
      models: ["llama3.1:8b", "qwen3:32b"],
      vramMiB: { "llama3.1:8b": 6346, "qwen3:32b": 21504 },
    });
  });

  it("TGI: /health and /info; a configured probe URL is probed as given", async () => {
    const tgi = engine({ "/health": ok(), "/info": ok('{"model_id":"mistralai/Mistral-7B-v0.3","max_input_tokens":4095}') });
    expect((await probeEngine(tgi, { ...base, engine: "tgi", baseUrl: "http://127.0.0.1:3000", wantModels: true })).models).toEqual([
      "mistralai/Mistral-7B-v0.3",
    ]);
    const custom = engine({ "/ready": ok(), "/v1/models": ok('{"data":[{"id":"m"}]}') });
    const r = await probeEngine(custom, { ...base, engine: "vllm", baseUrl: null, probeUrl: "http://127.0.0.1:9999/ready", wantModels: true });
    expect(r).toMatchObject({ probe: { ok: true, url: "http://127.0.0.1:9999/ready" }, models: ["m"] });
    expect(custom.asked).toEqual(["http://127.0.0.1:9999/ready", "http://127.0.0.1:9999/v1/models"]);
  });

  it("timeouts and other errors in words; error texts from the engines' bodies", async () => {
    const slow = engine({ "/health": { kind: "timeout", message: "x" } });
    expect((await probeEngine(slow, { ...base, engine: "vllm", baseUrl: "http://127.0.0.1:8000", wantModels: true })).probe.detail).toBe(
      "no answer within 2 s",
    );
    expect(errorText('{"detail":"Not Found"}')).toBe("Not Found");
    expect(errorText('{"error":"model is loading"}')).toBe("model is loading");
    expect(errorText("Service Unavailable\nmore")).toBe("Service Unavailable");
    expect(errorText("")).toBeUndefined();
    expect(modelsOf("vllm", "not json")).toEqual({});
  });

  it("/metrics: the text, or 'missing' when the engine was started without it", async () => {
    expect(
      await scrapeMetricsText(engine({ "/metrics": ok("vllm:num_requests_running 1\n") }), { unit: "u", baseUrl: "http://127.0.0.1:8000", timeoutMs: 1000 }),
    ).toEqual({
      text: "vllm:num_requests_running 1\n",
    });
    expect(await scrapeMetricsText(engine({}), { unit: "u", baseUrl: "http://127.0.0.1:8080", timeoutMs: 1000 })).toEqual({ missing: true });
    expect(
      await scrapeMetricsText(engine({ "/metrics": { kind: "refused", message: "" } }), { unit: "u", baseUrl: "http://127.0.0.1:8080", timeoutMs: 1000 }),
    ).toBeNull();
  });
});
