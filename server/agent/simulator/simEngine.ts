/**
 * The simulated units' inference engine (vLLM V1): the log lines a real start prints, at their
 * stage's share of the unit's load time (weights with a checkpoint-shard bar, torch.compile,
 * KV-cache sizing, CUDA-graph capture, the API server), and its HTTP endpoints as probes see
 * them: connection refused until it listens, then `/health`, `/v1/models` and `/metrics`.
 * A unit found running at start serves already. One shard per ~5 GiB of weights: Kimi K2.5's
 * 600 GiB on eight GPUs are 119 shards, as the incident's real unit loaded.
 */
import type { EngineHttp, EngineHttpRequest, EngineHttpResponse } from "../adapter";
import type { SimEngineState, SimUnit } from "./simUnit";
import type { MainBehavior } from "./units";
import type { SimUnitOps } from "./unitOps";

type Serve = Extract<MainBehavior, { kind: "serve" }>;

const MIB_PER_SHARD = 5160;
const GRAPH_SHAPES = 67;

/** The engine's state when its main process starts (`loaded`: the unit was serving before the simulator began). */
export function newSimEngine(u: SimUnit, loaded: boolean, nowMs: number): SimEngineState {
  const argv = u.spec.execStart;
  const at = argv.indexOf("serve");
  const model = at >= 0 && argv[at + 1] ? argv[at + 1]! : u.spec.name;
  return { pid: u.main?.pid ?? 0, model, listening: loaded, readyAtMs: loaded ? nowMs - u.spec.initialAgeMs : null };
}

/** vLLM's header: "INFO 05-01 03:12:04 [file.py:123] message". */
export function vllmLine(level: string, file: string, message: string, atMs: number): string {
  const d = new Date(atMs);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${level} ${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} [${file}] ${message}`;
}

/** Play a real-format vLLM start over the unit's load time; the engine listens at the end. */
export function playServeStart(ops: SimUnitOps, u: SimUnit, m: Serve): void {
  const engine = u.engine;
  const pid = u.main?.pid ?? null;
  if (!engine || pid === null) return;
  const tp = m.gpuIndexes.length;
  const worker = tp > 1 ? `(VllmWorker rank=0 pid=${pid + 1})` : `(EngineCore_0 pid=${pid + 1})`;
  const totalGiB = (m.perGpuMiB * tp) / 1024;
  const shards = Math.max(1, Math.round((m.perGpuMiB * tp) / MIB_PER_SHARD));
  const startMs = ops.now();
  const elapsed = () => ((ops.now() - startMs) / 1000).toFixed(2);
  const at = (fraction: number, line: () => string, level = 6) =>
    ops.after(u, m.loadMs * fraction, () => {
      if (u.main?.pid === pid) ops.log(u, line(), level, pid);
    });
  const argsText = `{'model': '${engine.model}', 'tensor_parallel_size': ${tp}}`;
  at(0, () => vllmLine("INFO", "__init__.py:244", "Automatically detected platform cuda.", ops.now()));
  at(0.02, () => vllmLine("INFO", "api_server.py:1395", "vLLM API server version 0.9.1", ops.now()));
  at(0.03, () => vllmLine("INFO", "cli_args.py:325", `non-default args: ${argsText}`, ops.now()));
  at(0.05, () => vllmLine("INFO", "core.py:455", "Waiting for init message from front-end.", ops.now()));
  at(0.06, () => `${worker} ${vllmLine("INFO", "gpu_model_runner.py:1595", `Starting to load model ${engine.model}...`, ops.now())}`);
  const weightsFrom = 0.08;
  const weightsTo = 0.58;
  let weightsStart = 0;
  for (let i = 0; i <= shards; i++) {
    at(weightsFrom + ((weightsTo - weightsFrom) * i) / shards, () => {
      if (i === 0) weightsStart = ops.now();
      const pct = Math.floor((100 * i) / shards);
      return `${worker} Loading safetensors checkpoint shards: ${String(pct).padStart(3)}% Completed | ${i}/${shards} [${clock(ops.now() - weightsStart)}<?, ?it/s]`;
    });
  }
  const since = (t: () => number) => ((ops.now() - t()) / 1000).toFixed(2);
  at(0.59, () => `${worker} ${vllmLine("INFO", "default_loader.py:272", `Loading weights took ${since(() => weightsStart)} seconds`, ops.now())}`);
  at(
    0.6,
    () =>
      `${worker} ${vllmLine("INFO", "gpu_model_runner.py:1624", `Model loading took ${(totalGiB / tp).toFixed(2)} GiB and ${elapsed()} seconds`, ops.now())}`,
  );
  let compileStart = 0;
  at(0.62, () => {
    compileStart = ops.now();
    return `${worker} ${vllmLine("INFO", "backends.py:462", "Using cache directory: /root/.cache/vllm/torch_compile_cache/3f2a9c1d7e/rank_0_0 for vLLM's torch.compile", ops.now())}`;
  });
  at(0.72, () => `${worker} ${vllmLine("INFO", "monitor.py:34", `torch.compile takes ${since(() => compileStart)} s in total`, ops.now())}`);
  at(0.74, () => vllmLine("INFO", "kv_cache_utils.py:715", `GPU KV cache size: ${Math.round(totalGiB * 2_000).toLocaleString("en-US")} tokens`, ops.now()));
  let graphsStart = 0;
  for (let i = 0; i <= GRAPH_SHAPES; i += 7) {
    const done = Math.min(i, GRAPH_SHAPES);
    at(0.76 + (0.16 * done) / GRAPH_SHAPES, () => {
      if (done === 0) graphsStart = ops.now();
      const pct = Math.floor((100 * done) / GRAPH_SHAPES);
      return `${worker} Capturing CUDA graph shapes: ${String(pct).padStart(3)}%|${"█".repeat(Math.floor(pct / 10)).padEnd(10)}| ${done}/${GRAPH_SHAPES} [${clock(ops.now() - graphsStart)}<?, ?it/s]`;
    });
  }
  at(
    0.93,
    () =>
      `${worker} ${vllmLine("INFO", "gpu_model_runner.py:2048", `Graph capturing finished in ${Math.round((ops.now() - graphsStart) / 1000)} secs, took 1.93 GiB`, ops.now())}`,
  );
  at(0.94, () => vllmLine("INFO", "core.py:171", `init engine (profile, create kv cache, warmup model) took ${since(() => compileStart)} seconds`, ops.now()));
  const portAt = u.spec.execStart.indexOf("--port");
  const port = portAt >= 0 ? (u.spec.execStart[portAt + 1] ?? "8000") : "8000";
  at(0.96, () => vllmLine("INFO", "api_server.py:1457", `Starting vLLM API server 0 on http://0.0.0.0:${port}`, ops.now()));
  at(0.97, () => `INFO:     Started server process [${pid}]`);
  at(0.98, () => "INFO:     Waiting for application startup.");
  ops.after(u, m.loadMs * 0.99, () => {
    if (u.main?.pid === pid) engine.listening = true;
  });
  at(1, () => {
    engine.readyAtMs = ops.now();
    return "INFO:     Application startup complete.";
  });
}

/** A crashing start sizes its KV cache before the out-of-memory error it ends with. */
export function playCrashStages(ops: SimUnitOps, u: SimUnit, afterMs: number): void {
  const pid = u.main?.pid ?? null;
  ops.after(u, Math.max(500, afterMs - 400), () => {
    if (pid !== null && u.main?.pid === pid) ops.log(u, vllmLine("INFO", "kv_cache_utils.py:715", "Available KV cache memory: 43.12 GiB", ops.now()), 6, pid);
  });
}

function clock(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** The simulated units' endpoints, as vLLM answers them. */
export class SimEngineHttp implements EngineHttp {
  constructor(
    private readonly unitOf: (name: string) => SimUnit | undefined,
    private readonly alive: (pid: number) => boolean,
    private readonly now: () => number = Date.now,
  ) {}

  async get(req: EngineHttpRequest): Promise<EngineHttpResponse> {
    const u = this.unitOf(req.unit);
    const e = u?.engine;
    if (!u || !e || !u.main || u.main.pid !== e.pid || !this.alive(e.pid) || !e.listening) return { kind: "refused", message: "connection refused" };
    const path = new URL(req.url).pathname;
    switch (path) {
      case "/health":
        return { kind: "response", status: 200, body: "" };
      case "/v1/models":
        return {
          kind: "response",
          status: 200,
          body: JSON.stringify({ object: "list", data: [{ id: e.model, object: "model", owned_by: "vllm", max_model_len: 131072 }] }),
        };
      case "/metrics":
        return { kind: "response", status: 200, body: this.metrics(u, e) };
      default:
        return { kind: "response", status: 404, body: JSON.stringify({ detail: "Not Found" }) };
    }
  }

  private metrics(u: SimUnit, e: SimEngineState): string {
    const m = u.spec.main;
    const busy = m.kind === "serve" ? m.busyPct / 100 : 0;
    const upS = Math.max(0, (this.now() - (e.readyAtMs ?? this.now())) / 1000);
    const labels = `{engine="0",model_name="${e.model}"}`;
    const running = Math.round(busy * 24);
    const requests = Math.floor(upS * busy * 3);
    return [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      `vllm:num_requests_running${labels} ${running}.0`,
      "# TYPE vllm:num_requests_waiting gauge",
      `vllm:num_requests_waiting${labels} ${Math.max(0, running - 18)}.0`,
      "# TYPE vllm:kv_cache_usage_perc gauge",
      `vllm:kv_cache_usage_perc${labels} ${(0.12 + busy * 0.7).toFixed(4)}`,
      "# TYPE vllm:generation_tokens_total counter",
      `vllm:generation_tokens_total${labels} ${Math.floor(upS * busy * 1850)}.0`,
      "# TYPE vllm:time_to_first_token_seconds histogram",
      ...histogram("vllm:time_to_first_token_seconds", e.model, requests, 0.08 + busy * 0.3, TTFT_BOUNDS),
      "# TYPE vllm:inter_token_latency_seconds histogram",
      ...histogram("vllm:inter_token_latency_seconds", e.model, Math.floor(upS * busy * 1850), 0.012 + busy * 0.03, ITL_BOUNDS),
      "",
    ].join("\n");
  }
}

const TTFT_BOUNDS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const ITL_BOUNDS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1];

/** A histogram as vLLM exports it: cumulative buckets (an exponential spread around `meanS`), _count and _sum. */
function histogram(name: string, model: string, count: number, meanS: number, bounds: readonly number[]): string[] {
  const labels = (le?: string) => `{engine="0",${le ? `le="${le}",` : ""}model_name="${model}"}`;
  return [
    ...bounds.map((b) => `${name}_bucket${labels(String(b))} ${Math.floor(count * (1 - Math.exp(-b / meanS)))}.0`),
    `${name}_bucket${labels("+Inf")} ${count}.0`,
    `${name}_count${labels()} ${count}.0`,
    `${name}_sum${labels()} ${(count * meanS).toFixed(3)}`,
  ];
}
