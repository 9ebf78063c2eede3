/**
 * One panel per server process: config, auth (panel.db), agent client, router and the agent
 * watcher, created on first use and kept on globalThis. The panel's server (serve.ts) creates
 * it at start-up; Next's route handlers, bundled separately, find the same object there, and
 * `next dev` module reloads do not open a second database handle or agent stream.
 */
import { createPanelAuth, type PanelAuth, type PanelAuthOptions } from "../auth/panelAuth";
import { proxyTrustWarning } from "../auth/proxy";
import type { Clock } from "../auth/types";
import { AuditSettler } from "./fleet/auditSettler";
import { Fleet, type FleetOptions } from "./fleet/fleet";
import { HostStore } from "./fleet/hostStore";
import { LazyStore } from "../store/lazyStore";
import type { AlertsConfig } from "../alerts/config";
import type { SendFn } from "../alerts/deliverer";
import { AlertsService } from "../alerts/service";
import type { StatusHttpDeps } from "../statusPage/http";
import { StatusPageService, type StatusServiceOptions } from "../statusPage/statusService";
import { loadPanelConfig, type PanelConfig } from "./config";
import { handleAuditCsvRequest } from "./auditCsv";
import { peerAddress } from "./context";
import { handlePanelRequest, type PanelEndpoint } from "./handler";
import { RefusalAuditLimiter, RefusalRecorder } from "./refusals";
import { SessionStreams } from "./sessionStreams";
import { announceSetup } from "./setupLink";
import type { PanelServices } from "./trpc";

export interface Panel {
  config: PanelConfig;
  auth: PanelAuth;
  /** One live stream per agent, and the browsers' fan-out. */
  fleet: Fleet;
  hostStore: HostStore;
  settler: AuditSettler;
  /** What procedures are given (named services; never this whole object). */
  services: PanelServices;
  streams: SessionStreams;
  refusalAudit: RefusalAuditLimiter;
  /** Aborted on shutdown: open browser streams end with a retryable error. */
  shutdown: AbortController;
  /** What the status page's routes (app/status/, app/api/status/) are served from. */
  statusHttp: StatusHttpDeps;
  /** The `/api/trpc` endpoint: guard, body limit, tRPC. */
  handle(req: Request): Promise<Response>;
  /** `/api/audit.csv`. */
  handleAuditCsv(req: Request): Response;
  /** Housekeeping: audit retention and expired sessions. Returns what was deleted. */
  prune(): { audit: number; sessions: number };
  /** End streams, stop the watcher and timers, close the database. */
  close(): void;
}

export interface CreatePanelOptions {
  clock?: Clock;
  log?: (msg: string) => void;
  /** Start the agent watcher, the daily pruning and print the setup link. Default true. */
  background?: boolean;
  /** Base URL for the setup link when GPUDECK_PUBLIC_URL is not set. */
  panelUrl?: string;
  /** The log is a terminal: print the setup link there (else it goes to <data dir>/setup-link). Default false. */
  interactive?: boolean;
  /** Test hooks into the auth module (rate limits, session policy). */
  auth?: Omit<PanelAuthOptions, "dataDir" | "clock">;
  refusalAuditPerMinute?: number;
  streamRecheckMs?: number;
  /** Test hooks into the fleet hub (retry timings, summary tick). */
  fleet?: FleetOptions;
  /** Test hooks into alerts (short tick, grouping window and backoff; a stand-in sender). */
  alerts?: Partial<Omit<AlertsConfig, "delivery">> & { delivery?: Partial<AlertsConfig["delivery"]>; send?: SendFn };
  /** Test hooks into the status page (cache lifetimes). */
  statusPage?: Partial<Pick<StatusServiceOptions, "documentTtlMs" | "uptimeTtlMs" | "settingsTtlMs">>;
}

const DAY = 24 * 60 * 60 * 1000;

export function createPanel(config: PanelConfig, options: CreatePanelOptions = {}): Panel {
  const log = options.log ?? ((m: string) => console.log(`[panel] ${m}`));
  const auth = createPanelAuth({
    dataDir: config.dataDir,
    clock: options.clock,
    sessions: { idleTimeoutMs: config.sessionIdleMs, absoluteLifetimeMs: config.sessionMaxMs },
    proxy: config.proxy,
    authorization: { operatorMayKill: config.operatorMayKill, viewerMayReadJournal: config.viewerJournal },
    // A second restart or stop of a unit within the window needs confirmation (two people
    // answering the same alert). Kill is left out: restart right after a kill is the recovery.
    guard: { windowMs: config.actionGuardMs, actions: ["restart", "stop"] },
    ...options.auth,
  });
  const proxyWarning = proxyTrustWarning(config.proxy);
  if (proxyWarning) log(`WARNING: ${proxyWarning}`);
  const shutdown = new AbortController();
  const hostStore = new HostStore(auth.db, options.clock);
  const stored = hostStore.list().filter((h) => !config.hosts.some((c) => c.name === h.name));
  const fleet = new Fleet([...config.hosts, ...stored], {
    ...options.fleet,
    link: { log, clock: options.clock, ...options.fleet?.link, requireSimulated: config.demo },
  });
  const settler = new AuditSettler(auth.audit, { clock: options.clock });
  const store = new LazyStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  fleet.onHostEvent((host, event) => settler.handle(host, event));
  const streams = new SessionStreams(options.streamRecheckMs, { perOwner: config.streamsPerSession, total: config.streamsMax });
  const refusalAudit = new RefusalAuditLimiter(options.refusalAuditPerMinute, options.clock);
  const panelUrl = config.publicUrl ?? options.panelUrl ?? "http://127.0.0.1:3000";
  const { send, delivery, ...alertHooks } = options.alerts ?? {};
  const alerts = new AlertsService({
    fleet,
    store,
    config: { ...config.alerts, ...alertHooks, delivery: { ...config.alerts.delivery, ...delivery } },
    panelUrl,
    log,
    clock: options.clock,
    send,
  });
  const statusPage = new StatusPageService({ fleet, store, envToken: config.statusToken, panelUrl, clock: options.clock, ...options.statusPage });
  const services: PanelServices = {
    demo: config.demo,
    auth,
    fleet,
    hostStore,
    settler,
    store,
    streams,
    refusals: new RefusalRecorder(auth.audit, refusalAudit, () => null),
    alerts,
    statusPage,
    shutdown: shutdown.signal,
  };
  const endpoint: PanelEndpoint = { config, services };

  let pruneTimer: ReturnType<typeof setInterval> | null = null;
  const panel: Panel = {
    config,
    auth,
    fleet,
    hostStore,
    settler,
    services,
    streams,
    refusalAudit,
    shutdown,
    statusHttp: {
      service: statusPage,
      allowedHosts: config.allowedHosts,
      signedIn: (req) => config.demo || auth.authenticate({ remoteAddress: peerAddress(req.headers), headers: req.headers, secure: config.secureCookies }).ok,
      shutdown: shutdown.signal,
    },
    handle: (req) => handlePanelRequest(req, endpoint),
    handleAuditCsv: (req) => handleAuditCsvRequest(req, endpoint),
    prune: () => ({ audit: auth.audit.pruneAudit(config.auditRetentionMs), sessions: auth.sessions.pruneExpiredSessions() }),
    close: () => {
      shutdown.abort();
      alerts.stop();
      fleet.stop();
      void store.close();
      if (pruneTimer) clearInterval(pruneTimer);
      auth.close();
    },
  };

  if (options.background !== false) {
    const prune = () => {
      try {
        const n = panel.prune();
        if (n.audit > 0) log(`audit retention: removed ${n.audit} entries older than ${Math.round(config.auditRetentionMs / DAY)} days`);
      } catch (err) {
        log(`pruning failed: ${(err as Error).message}`);
      }
    };
    prune();
    pruneTimer = setInterval(prune, DAY);
    pruneTimer.unref();
    fleet.start();
    alerts.start();
    if (!config.demo) {
      const base = config.publicUrl ?? options.panelUrl ?? "http://127.0.0.1:3000";
      announceSetup({ auth, dataDir: config.dataDir, base, interactive: options.interactive ?? false, log });
    }
  }
  return panel;
}

const KEY = Symbol.for("gpudeck.panel");
type Holder = { [KEY]?: Panel };

/** The process's panel, created from the environment on first use. */
export function getPanel(options?: CreatePanelOptions): Panel {
  const g = globalThis as Holder;
  g[KEY] ??= createPanel(loadPanelConfig(), options);
  return g[KEY];
}

/** The process's panel if one was created (no side effects). */
export function existingPanel(): Panel | null {
  return (globalThis as Holder)[KEY] ?? null;
}

/**
 * Shutdown, step one: end every browser stream with a retryable error, so the HTTP server can
 * close. serve.ts calls it on SIGTERM/SIGINT, then closes the server and the panel.
 */
export function shutdownPanel(): void {
  existingPanel()?.shutdown.abort();
}
