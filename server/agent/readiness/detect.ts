/**
 * Which engine a unit runs, and where it listens, from its ExecStart= (systemd's argv) and the
 * few environment variables engines read: `vllm serve` / `python -m vllm.entrypoints.openai.
 * api_server`, `python -m sglang.launch_server`, `llama-server`, `ollama serve` (OLLAMA_HOST),
 * `text-generation-launcher`; also inside `sh -c '…'` and `docker|podman run … image [cmd]`
 * (engine from the command or the image, port from `-p` or `--network host`). Pure.
 */
import type { EngineKind } from "../../contract/readiness";
import type { ExecCommand } from "../../contract/types";
import { basename, expandShellScripts, hasFlag, optionValue, parseContainerRun, validPort, type ContainerRun } from "./argv";
import { probeHost } from "./localAddress";

/** Environment variables of the unit's Environment= the detection reads (never anything else). */
export const ENGINE_ENV_KEYS = ["OLLAMA_HOST", "LLAMA_ARG_HOST", "LLAMA_ARG_PORT", "LLAMA_ARG_ENDPOINT_METRICS", "PORT", "HOSTNAME"] as const;

export interface EngineTarget {
  engine: EngineKind;
  /** where probes go, e.g. http://127.0.0.1:8000; null when the agent may not or cannot probe it */
  baseUrl: string | null;
  /** why baseUrl is null, in words */
  problem: string | null;
  /** the engine serves Prometheus text at /metrics */
  metrics: boolean;
  /** the model named on the command line, when one is */
  model: string | null;
  /** where the engine was recognised: "ExecStart" or "docker image …" */
  via: string;
}

interface EngineCommand {
  engine: EngineKind;
  /** the engine's own arguments */
  args: string[];
  /** the positional model argument (`vllm serve MODEL`) */
  positional: string | null;
}

const DEFAULTS: Record<EngineKind, { host: string; port: number }> = {
  vllm: { host: "0.0.0.0", port: 8000 },
  sglang: { host: "127.0.0.1", port: 30000 },
  "llama.cpp": { host: "127.0.0.1", port: 8080 },
  ollama: { host: "127.0.0.1", port: 11434 },
  tgi: { host: "0.0.0.0", port: 3000 },
};

// Images whose entrypoint is the engine (the words after the image are its arguments).
const IMAGES: [RegExp, EngineKind, number][] = [
  [/(^|\/)vllm-openai(:|@|$)|(^|\/)vllm\/vllm/, "vllm", 8000],
  [/(^|\/)sglang(:|@|$)/, "sglang", 30000],
  [/(^|\/)llama\.cpp(:|@|$)/, "llama.cpp", 8080],
  [/(^|\/)ollama(:|@|$)/, "ollama", 11434],
  [/(^|\/)text-generation-inference(:|@|$)/, "tgi", 80],
];

/** The engine a unit's ExecStart runs, or null when none is recognised. */
export function detectEngine(execStart: readonly ExecCommand[], env: Readonly<Record<string, string>> = {}): EngineTarget | null {
  for (const cmd of execStart) {
    const argv = expandShellScripts(cmd.argv.length > 0 ? cmd.argv : [cmd.path]);
    for (let i = 0; i < argv.length; i++) {
      const run = parseContainerRun(argv, i);
      if (run) return fromContainer(run);
      const found = engineAt(argv, i);
      if (found) return target(found, env, "ExecStart");
    }
  }
  return null;
}

function engineAt(argv: readonly string[], i: number): EngineCommand | null {
  const word = basename(argv[i]!);
  const next = argv[i + 1];
  const rest = (from: number) => argv.slice(from, endOfCommand(argv, from));
  if (word === "vllm" && next === "serve") {
    const args = rest(i + 2);
    return { engine: "vllm", args, positional: args[0] && !args[0].startsWith("-") ? args[0] : null };
  }
  if (argv[i] === "-m" && next && /^vllm\.entrypoints\.(openai\.)?api_server$/.test(next)) return { engine: "vllm", args: rest(i + 2), positional: null };
  if (argv[i] === "-m" && next === "sglang.launch_server") return { engine: "sglang", args: rest(i + 2), positional: null };
  if (word === "llama-server") return { engine: "llama.cpp", args: rest(i + 1), positional: null };
  if (word === "ollama" && next === "serve") return { engine: "ollama", args: rest(i + 2), positional: null };
  if (word === "text-generation-launcher") return { engine: "tgi", args: rest(i + 1), positional: null };
  return null;
}

/** A script's next command starts after `&&`, `;`, `|` … */
function endOfCommand(argv: readonly string[], from: number): number {
  const end = argv.findIndex((a, k) => k >= from && /^(&&|\|\||;|\||&)$/.test(a));
  return end < 0 ? argv.length : end;
}

function fromContainer(run: ContainerRun): EngineTarget | null {
  let found: EngineCommand | null = null;
  for (let i = 0; i < run.command.length && !found; i++) found = engineAt(run.command, i);
  const image = IMAGES.find(([re]) => re.test(run.image));
  if (!found && image) found = { engine: image[1], args: run.command, positional: null };
  if (!found) return null;
  // The TGI image sets PORT=80; inside the container the engine listens where its args say.
  const env = found.engine === "tgi" && image && run.env.PORT === undefined ? { ...run.env, PORT: "80" } : run.env;
  const inner = target(found, env, `${run.cli} image ${run.image}`);
  const innerPort = listenOf(found, env).port;
  if (run.hostNetwork) return inner;
  const mapping = run.ports.find((p) => p.containerPort === innerPort);
  if (!mapping || mapping.hostPort === null) {
    const why = run.publishAll || mapping ? "published on a random host port" : "not published (-p)";
    return { ...inner, baseUrl: null, problem: `port ${innerPort} of the container is ${why}; set probeUrl in GPUDECK_READINESS` };
  }
  const host = probeHost(mapping.hostIp);
  if (host.problem) return { ...inner, baseUrl: null, problem: host.problem };
  return { ...inner, baseUrl: `http://${host.host}:${mapping.hostPort}`, problem: null };
}

function target(found: EngineCommand, env: Readonly<Record<string, string>>, via: string): EngineTarget {
  const { host, port, problem: listenProblem } = listenOf(found, env);
  const model = modelOf(found);
  const metrics = metricsOf(found, env);
  if (listenProblem) return { engine: found.engine, baseUrl: null, problem: listenProblem, metrics, model, via };
  const h = probeHost(host);
  if (h.problem) return { engine: found.engine, baseUrl: null, problem: h.problem, metrics, model, via };
  return { engine: found.engine, baseUrl: `http://${h.host}:${port}`, problem: null, metrics, model, via };
}

function listenOf(found: EngineCommand, env: Readonly<Record<string, string>>): { host: string; port: number; problem?: string } {
  const d = DEFAULTS[found.engine];
  const a = found.args;
  let host: string | null;
  let portText: string | null;
  switch (found.engine) {
    case "ollama":
      return ollamaHost(env.OLLAMA_HOST);
    case "llama.cpp":
      host = optionValue(a, ["--host"]) ?? env.LLAMA_ARG_HOST ?? null;
      portText = optionValue(a, ["--port"]) ?? env.LLAMA_ARG_PORT ?? null;
      break;
    case "tgi":
      host = optionValue(a, ["--hostname"]) ?? env.HOSTNAME ?? null;
      portText = optionValue(a, ["--port", "-p"]) ?? env.PORT ?? null;
      break;
    default:
      host = optionValue(a, ["--host"]);
      portText = optionValue(a, ["--port"]);
  }
  const port = portText === null ? d.port : Number(portText);
  if (!validPort(port)) return { host: d.host, port: d.port, problem: `its port "${portText}" is not a port number` };
  return { host: host ?? d.host, port };
}

/** OLLAMA_HOST: "host", "host:port", ":port", "http://host:port" (default 127.0.0.1:11434). */
export function ollamaHost(value: string | undefined): { host: string; port: number; problem?: string } {
  const v = (value ?? "")
    .trim()
    .replace(/^https?:\/\//, "")
    .replace(/\/.*$/, "");
  if (v === "") return { host: "127.0.0.1", port: 11434 };
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(v);
  if (!m) return { host: "127.0.0.1", port: 11434, problem: `OLLAMA_HOST "${value}" is not host[:port]` };
  const port = m[2] ? Number(m[2]) : 11434;
  if (!validPort(port)) return { host: "127.0.0.1", port: 11434, problem: `OLLAMA_HOST "${value}" has no valid port` };
  return { host: m[1]!.replace(/^\[|\]$/g, "") || "0.0.0.0", port };
}

function modelOf(found: EngineCommand): string | null {
  const a = found.args;
  switch (found.engine) {
    case "vllm":
      return optionValue(a, ["--served-model-name"]) ?? found.positional ?? optionValue(a, ["--model"]);
    case "sglang":
      return optionValue(a, ["--served-model-name", "--model-path", "--model"]);
    case "llama.cpp":
      return optionValue(a, ["--alias", "-a", "--model", "-m", "--hf-repo", "-hf"]);
    case "tgi":
      return optionValue(a, ["--model-id"]);
    case "ollama":
      return null;
  }
}

function metricsOf(found: EngineCommand, env: Readonly<Record<string, string>>): boolean {
  switch (found.engine) {
    case "vllm":
      return true;
    case "sglang":
      return hasFlag(found.args, ["--enable-metrics"]);
    case "llama.cpp":
      return hasFlag(found.args, ["--metrics"]) || /^(1|true|on|yes)$/i.test(env.LLAMA_ARG_ENDPOINT_METRICS ?? "");
    default:
      // Ollama has no /metrics (ollama #3144); TGI serves it on its own --prometheus-port.
      return false;
  }
}
