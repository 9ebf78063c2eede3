import { afterEach, describe, expect, it, vi } from "vitest";
import { recognise } from "../readiness/patterns/index";
import { createSimulatedHost } from "./index";

const KIMI = "vllm-kimi-k25.service";
let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

describe("the simulated engines", () => {
  it("a restarted vLLM logs real-format lines (119 shards for Kimi), refuses connections until it listens, then serves its model and metrics", async () => {
    const host = createSimulatedHost({ unitGlobs: ["vllm-*.service"], timing: { speed: 10 } });
    await host.systemd.start(() => undefined);
    close = () => host.systemd.close();
    const get = (path: string) => host.engines!.get({ unit: KIMI, url: `http://127.0.0.1:8000${path}`, timeoutMs: 1000 });
    expect(await get("/health")).toEqual({ kind: "response", status: 200, body: "" }); // running since before the simulator started
    await host.systemd.act(KIMI, "restart");
    await vi.waitFor(async () => expect(await get("/health")).toEqual({ kind: "refused", message: "connection refused" }), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect((await get("/health")).kind).toBe("response"), { timeout: 20_000, interval: 50 });
    // it listens at 99% of the load time and says "startup complete" at 100%: wait for that line
    // too, or a busy machine reads the journal in between
    const journal = async () => (await host.systemd.journal(KIMI, 400)).map((e) => e.message);
    await vi.waitFor(async () => expect(await journal()).toContain("INFO:     Application startup complete."), { timeout: 10_000, interval: 50 });
    const lines = await journal();
    const ids = lines.flatMap((m) => recognise("vllm", m).map((r) => r.id));
    expect(new Set(ids)).toEqual(
      new Set([
        "vllm-start-load",
        "checkpoint-shards",
        "vllm-weights-took",
        "vllm-model-loading-took",
        "vllm-compile",
        "vllm-compile-took",
        "vllm-kv-cache",
        "vllm-graphs-bar",
        "vllm-graphs-took",
        "vllm-init-took",
        "vllm-api-server",
        "vllm-ready",
      ]),
    );
    expect(lines.filter((m) => /checkpoint shards/.test(m)).at(-1)).toMatch(/100% Completed \| 119\/119/);
    const models = await get("/v1/models");
    expect(models.kind === "response" && JSON.parse(models.body).data[0].id).toBe("/models/kimi-k2.5");
    const metrics = await get("/metrics");
    expect(metrics.kind === "response" && metrics.body).toMatch(/^vllm:num_requests_running\{engine="0",model_name="\/models\/kimi-k2.5"\} \d+\.0$/m);
    expect(await get("/nope")).toMatchObject({ kind: "response", status: 404 });
    expect(await host.engines!.get({ unit: "vllm-llama-70b.service", url: "http://127.0.0.1:8030/health", timeoutMs: 1000 })).toMatchObject({
      kind: "refused",
    });
  }, 40_000);
});
