/**
 * gpudeck agent: one per GPU host. Serves its tRPC API at /trpc (SSE subscriptions),
 * /healthz and /metrics; every call needs `Authorization: Bearer <token>`.
 * Run: `npm run agent` (see config.ts for flags and environment variables).
 */
import { limitJournalReads } from "./journalReads";
import http from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { ConfigError, loadAgentConfig, type AgentConfig } from "./config";
import { Hub } from "./hub/hub";
import { createAgentRouter } from "./router";
import { resolveAgentToken, bearerMatches } from "./token";
import type { HostAdapter } from "./adapter";
import { GpuAttributor } from "./gpu/attribution";
import { SampleHistory } from "./sampleHistory";
import { HistoryStore } from "./historyStore";
import { renderMetrics } from "./metrics";
import { createAgentServer, plainHttpRefusal } from "./listen";
import { closeAgentParts, createAgentParts } from "./agentParts";
import { closeReadiness, createHttpEngineProbe, startReadiness } from "./readiness/index";
import { EMPTY_READINESS_CONFIG } from "./readiness/config";
import { SelfHealer, selfHealConfigured } from "./selfHeal/healer";
import { JournalctlKernelLog } from "./faults/kernelLog";
import { MemoryPoolAttributor, meminfoReader } from "./gpu/memoryPool";
import { withProcessControl } from "./gpu/processControl";
import type { Actor, Role } from "../contract/actors";
import { applyConfigFileOrExit } from "../config/configFile";
import type { Context } from "../trpc";

export interface RunningAgent {
  url: string;
  token: string;
  hub: Hub;
  /** Cut every open connection, as a network blip would (clients reconnect and resume). */
  dropConnections(): void;
  close(): Promise<void>;
}

const log = (msg: string) => process.stderr.write(`[agent] ${msg}\n`);

async function createHost(config: AgentConfig): Promise<HostAdapter> {
  if (config.simulate) {
    const { createSimulatedHost } = await import("./simulator/index");
    const speed = Number(process.env.GPUDECK_SIM_SPEED ?? 1);
    // how long a killed process's memory drains, in simulated seconds (default 30): the browser
    // suite lengthens it so a slow machine still sees the memory held when it looks
    const drainS = Number(process.env.GPUDECK_SIM_DRAIN_S);
    return createSimulatedHost({
      profile: config.simProfile,
      unitGlobs: config.unitGlobs,
      gpuIntervalMs: config.gpuIntervalMs,
      timing: { speed: Number.isFinite(speed) && speed > 0 ? speed : 1, ...(Number.isFinite(drainS) && drainS > 0 ? { drainMs: drainS * 1000 } : {}) },
    });
  }
  const [{ createSystemdAdapter }, { createNvidiaSmiAdapter, createProcAdapter }] = await Promise.all([import("./systemd/index"), import("./gpu/index")]);
  return {
    kind: "real",
    systemd: createSystemdAdapter({ unitGlobs: config.unitGlobs, log }),
    gpu: createNvidiaSmiAdapter({ nvidiaSmiPath: config.nvidiaSmiPath, intervalMs: config.gpuIntervalMs, log }),
    procs: withProcessControl(createProcAdapter(), meminfoReader()),
    kernelLog: new JournalctlKernelLog({ journalctl: config.journalctlPath, log }),
    engines: createHttpEngineProbe(),
  };
}

/** The panel forwards who is acting; only a caller holding the token can set it. */
function actorFromHeaders(req: http.IncomingMessage): Actor {
  const raw = req.headers["x-gpudeck-actor"];
  const fallback: Actor = { user: "agent-token", role: "admin", unitPatterns: [] };
  if (typeof raw !== "string" || raw.length > 2000) return fallback;
  try {
    const parsed = JSON.parse(Buffer.from(raw, "base64url").toString("utf8")) as Partial<Actor>;
    const roles: Role[] = ["viewer", "operator", "admin"];
    if (typeof parsed.user !== "string" || !roles.includes(parsed.role as Role)) return fallback;
    return {
      user: parsed.user.slice(0, 200),
      role: parsed.role as Role,
      unitPatterns: [],
      sourceAddr: typeof parsed.sourceAddr === "string" ? parsed.sourceAddr.slice(0, 100) : undefined,
    };
  } catch {
    return fallback;
  }
}

export async function startAgent(config: AgentConfig): Promise<RunningAgent> {
  const token = await resolveAgentToken(config, log);
  if (config.unitGlobs.length === 0) {
    log("GPUDECK_UNITS is not set: this agent will show and control no units.");
    log("  Set it to the units gpudeck may manage, e.g. GPUDECK_UNITS='vllm-*.service,tgi-*.service'");
  }
  const host = await createHost(config);
  // at most 8 journalctl reads at once, 32 waiting (./journalReads.ts)
  limitJournalReads(host);
  // A simulated host starts its world afresh each run: its history is not kept (unless asked, for benchmarks).
  let store: HistoryStore | null = null;
  if (!config.simulate || config.simHistory) {
    try {
      store = HistoryStore.open(config.dataDir);
    } catch (err) {
      log(`${(err as Error).message}; history is kept in memory only (lost when the agent restarts)`);
    }
  }
  const attributor = new MemoryPoolAttributor(new GpuAttributor(host.procs), host.procs.meminfo?.bind(host.procs));
  const hub = new Hub(host, attributor, new SampleHistory(), { store, log, hostname: config.simulate ? config.simHostname : undefined });
  const parts = createAgentParts(hub, { crashLoopRule: config.crashLoopRule, operations: { log } });
  const shutdown = new AbortController();
  const appRouter = createAgentRouter({ hub, unitGlobs: config.unitGlobs, shutdown: shutdown.signal });

  const trpcHandler = createHTTPHandler({
    router: appRouter,
    basePath: "/trpc/",
    createContext: ({ req }): Context => ({
      actor: actorFromHeaders(req),
      sourceAddr: req.socket.remoteAddress,
    }),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") log(`error in ${path ?? "?"}: ${error.message}`);
    },
  });

  const server = createAgentServer(config.tls, async (req, res) => {
    const url = new URL(req.url ?? "/", "http://agent");
    res.setHeader("Cache-Control", "no-store");
    if (url.pathname === "/healthz") {
      // no secrets here; health is public so load balancers and systemd watchdogs can ask
      const body = {
        ok: true,
        bootId: hub.bootId,
        systemd: hub.systemdStatus().state,
        telemetry: hub.telemetryStatus().state,
        history: hub.historyState(),
      };
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      return;
    }
    if (!bearerMatches(req.headers.authorization, token)) {
      res.writeHead(401, { "Content-Type": "application/json", "WWW-Authenticate": "Bearer" });
      res.end(JSON.stringify({ error: "missing or wrong bearer token" }));
      return;
    }
    if (url.pathname === "/metrics") {
      const text = await renderMetrics({
        sample: hub.gpuNow(),
        telemetry: hub.telemetryStatus(),
        systemd: hub.systemdStatus(),
        units: hub.units(),
        eventStreams: hub.subscriberCount(),
        faults: parts.faults.all(),
        engines: readiness.exports(),
      });
      res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" }).end(text);
      return;
    }
    if (url.pathname.startsWith("/trpc/")) {
      trpcHandler(req, res);
      return;
    }
    res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ error: "not found" }));
  });
  // requestTimeout bounds receiving a request (headers, body), never a response: streams last
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  server.timeout = 120_000; // no traffic either way (streams ping every 10 s)

  await hub.start();
  const readiness = await startReadiness(hub, { config: config.readiness ?? EMPTY_READINESS_CONFIG, store, log });
  // opt-in: only where a unit's probe settings carry healAfter
  const readinessConfig = config.readiness ?? EMPTY_READINESS_CONFIG;
  const healer = selfHealConfigured(readinessConfig)
    ? new SelfHealer(hub, readiness, parts.operations, parts.crashLoops, { config: readinessConfig, log })
    : null;
  parts.faults.start(host.kernelLog);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const url = `${config.tls ? "https" : "http"}://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`;
  log(`listening on ${url} (${host.kind === "simulator" ? "simulated host" : "systemd + nvidia-smi"})`);

  let closing: Promise<void> | null = null;
  return {
    url,
    token,
    hub,
    dropConnections: () => server.closeAllConnections(),
    close() {
      closing ??= (async () => {
        shutdown.abort();
        healer?.close();
        await new Promise((r) => setTimeout(r, 50)); // let streams send their final error
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
        await closeAgentParts(hub);
        closeReadiness(hub);
        await hub.close();
        store?.close();
      })();
      return closing;
    },
  };
}

async function main(): Promise<void> {
  // GPUDECK_CONFIG: the config file's [agent] keys become defaults for the variables read below
  applyConfigFileOrExit(process.env, "agent", { log, validate: () => loadAgentConfig(process.argv.slice(2), process.env) });
  let config: AgentConfig;
  try {
    config = loadAgentConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof ConfigError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      log(`configuration error: ${(err as Error).message}`);
      process.exit(2);
    }
    throw err;
  }
  const refusal = plainHttpRefusal(config);
  if (refusal) {
    log(`configuration error: ${refusal}`);
    process.exit(2);
  }
  const agent = await startAgent(config);
  const stop = (signal: string) => {
    log(`${signal}: shutting down`);
    const force = setTimeout(() => process.exit(0), 1500);
    force.unref();
    void agent.close().then(() => process.exit(0));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: Error) => {
    if (err instanceof ConfigError) {
      log(`configuration error: ${err.message}`);
      process.exit(2);
    }
    log(`fatal: ${err.stack ?? err.message}`);
    process.exit(1);
  });
}
