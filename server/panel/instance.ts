/**
 * One panel per server process: config, the database (one store: SQLite or PostgreSQL), auth,
 * agent clients, router, the fleet (one stream per agent) and the panel event bus, created on
 * first use and kept on globalThis. The panel's server (serve.ts) creates it at start-up; Next's
 * route handlers, bundled separately, find the same object there, and `next dev` module reloads
 * do not open a second database pool or agent stream.
 *
 * Several replicas on one PostgreSQL share everything people cause (users, sessions, audit, the
 * sign-in limiter, the action guard, hosts, alerts); each holds its own stream per agent. What one
 * replica changes reaches the others as panel events (sessions → open streams re-check, hosts →
 * the fleet follows).
 */
import { setEgressPolicy } from "../egress/guard";
import { PanelAuth, type PanelAuthOptions } from "../auth/panelAuth";
import { OidcSignIn, type OidcSignInOptions } from "../auth/oidc/signIn";
import { proxyTrustWarning } from "../auth/proxy";
import { addressBucket } from "../auth/rateLimit";
import type { Clock } from "../auth/types";
import { AuditSettler } from "./fleet/auditSettler";
import { Fleet, type FleetOptions } from "./fleet/fleet";
import { HostStore, syncStoredHosts, type StoredHost } from "./fleet/hostStore";
import { PanelEventBus, type EventBusOptions } from "../store/eventBus";
import { pruneEvents } from "../store/events";
import { LazyStore } from "../store/lazyStore";
import { unreachableReason } from "../store/unavailable";
import type { AlertsConfig } from "../alerts/config";
import type { SendFn } from "../alerts/deliverer";
import { AlertsService } from "../alerts/service";
import { PushService } from "../push/service";
import type { StatusHttpDeps } from "../statusPage/http";
import { StatusPageService, type StatusServiceOptions } from "../statusPage/statusService";
import { loadPanelConfig, type PanelConfig } from "./config";
import { handleAuditCsvRequest } from "./auditCsv";
import { clientAddress, peerAddress } from "./context";
import { handlePanelRequest, type PanelEndpoint } from "./handler";
import { handleOidcRequest } from "./oidcRoutes";
import { panelHealth, type PanelHealth } from "./health";
import { ANONYMOUS_REFUSALS_PER_MINUTE, ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE, RefusalAuditLimiter, RefusalRecorder } from "./refusals";
import { QueryRateLimiter } from "./queryLimit";
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
  handleAuditCsv(req: Request): Promise<Response>;
  /** Single sign-on (`/api/auth/oidc/login`, `/api/auth/oidc/callback`); null signIn when not configured. */
  oidc: OidcSignIn | null;
  handleOidc(req: Request): Promise<Response>;
  /** `/healthz`: the database and the LISTEN connection. */
  health(): Promise<PanelHealth>;
  /** Housekeeping: audit retention, expired sessions, old panel events and sign-in counters. Returns what was deleted. */
  prune(): Promise<{ audit: number; sessions: number }>;
  /** Re-read the hosts table and bring the fleet in line (after a `hosts` event; at start). */
  syncHosts(): Promise<void>;
  /** End streams, stop the watcher and timers, close the database. */
  close(): Promise<void>;
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
  auth?: Omit<PanelAuthOptions, "clock" | "events">;
  /** Test hooks into the panel event bus (poll period). */
  events?: Omit<EventBusOptions, "log" | "clock">;
  refusalAuditPerMinute?: number;
  streamRecheckMs?: number;
  /** Test hooks into the fleet hub (retry timings, summary tick). */
  fleet?: FleetOptions;
  /** Test hooks into alerts (short tick, grouping window and backoff; a stand-in sender). */
  alerts?: Partial<Omit<AlertsConfig, "delivery">> & { delivery?: Partial<AlertsConfig["delivery"]>; send?: SendFn };
  /** Test hooks into single sign-on (fetch, clock skew). */
  oidc?: Pick<OidcSignInOptions, "fetch" | "clockSkewSeconds" | "timeoutSeconds">;
  /** Test hooks into the status page (cache lifetimes). */
  statusPage?: Partial<Pick<StatusServiceOptions, "documentTtlMs" | "uptimeTtlMs" | "settingsTtlMs">>;
}

const DAY = 24 * 60 * 60 * 1000;
/** Panel events are read by every replica within seconds; a day of them is plenty of history. */
const EVENTS_KEPT_MS = DAY;

export async function createPanel(config: PanelConfig, options: CreatePanelOptions = {}): Promise<Panel> {
  const log = options.log ?? ((m: string) => console.log(`[panel] ${m}`));
  // before any agent client or sender exists: every outbound connection goes through the guard
  setEgressPolicy(config.egress);
  const store = new LazyStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, secretKey: config.secretKey });
  const events = new PanelEventBus(store, { ...options.events, log, clock: options.clock });
  // refusals anyone can repeat (setup, proxy identities) go through the capped recorder, made below
  let refusals: RefusalRecorder | null = null;
  const auth = new PanelAuth(store, {
    events,
    refusals: (r) => refusals!.recordAnonymous(r),
    clock: options.clock,
    sessions: { idleTimeoutMs: config.sessionIdleMs, absoluteLifetimeMs: config.sessionMaxMs, maxPerUser: config.sessionsPerUser },
    proxy: config.proxy,
    authorization: { operatorMayKill: config.operatorMayKill, viewerMayReadJournal: config.viewerJournal },
    // A second restart or stop of a unit within the window needs confirmation (two people
    // answering the same alert). Kill is left out: restart right after a kill is the recovery.
    guard: { windowMs: config.actionGuardMs, actions: ["restart", "stop"] },
    tokenRequestsPerMinute: config.tokenRequestsPerMinute,
    requireTwoFactorFor: config.requireTwoFactorFor,
    ...options.auth,
  });
  const proxyWarning = proxyTrustWarning(config.proxy);
  if (proxyWarning) log(`WARNING: ${proxyWarning}`);
  const shutdown = new AbortController();
  const hostStore = new HostStore(store, options.clock, events);
  // the database may be away at start: the panel starts with the configured hosts, and adds the
  // stored ones when it answers (syncHosts below)
  let stored: StoredHost[] | null = await hostStore.list().catch((err: unknown) => {
    log(`the panel database cannot be read yet (${unreachableReason(err)}); hosts added on the Hosts page follow when it answers`);
    return null;
  });
  const fleet = new Fleet([...config.hosts, ...(stored ?? []).filter((h) => !config.hosts.some((c) => c.name === h.name))], {
    ...options.fleet,
    link: { log, clock: options.clock, ...options.fleet?.link, requireSimulated: config.demo },
  });
  const settler = new AuditSettler(auth.audit, { clock: options.clock, log });
  fleet.onHostEvent((host, event) => void settler.handle(host, event));
  const streams = new SessionStreams(options.streamRecheckMs, { perOwner: config.streamsPerSession, perUser: config.streamsPerUser, total: config.streamsMax });
  const syncHosts = async () => {
    stored = await hostStore.list();
    const changed = syncStoredHosts(fleet, stored);
    for (const name of [...changed.added, ...changed.changed]) log(`host ${name}: added or changed on the Hosts page (maybe by another replica)`);
    for (const name of changed.removed) log(`host ${name}: removed on the Hosts page (maybe by another replica)`);
  };
  // what another replica (or the CLI) did: streams of that user re-check, the fleet follows the hosts table
  events.subscribe((e) => {
    if (e.kind === "sessions") streams.changed({ userId: e.body.userId, username: e.body.username });
    else if (e.kind === "hosts") void syncHosts().catch((err: Error) => log(`the hosts table cannot be read: ${err.message}`));
  });
  const refusalAudit = new RefusalAuditLimiter(options.refusalAuditPerMinute, options.clock);
  const panelUrl = config.publicUrl ?? options.panelUrl ?? "http://127.0.0.1:3000";
  const { send, delivery, ...alertHooks } = options.alerts ?? {};
  const push = new PushService({ store, config: config.push, panelUrl, log });
  const alerts = new AlertsService({
    push,
    fleet,
    store,
    config: { ...config.alerts, ...alertHooks, delivery: { ...config.alerts.delivery, ...delivery } },
    panelUrl,
    log,
    clock: options.clock,
    send,
  });
  const statusPage = new StatusPageService({
    fleet,
    store,
    envToken: config.statusToken,
    panelUrl,
    clock: options.clock,
    maintenance: () => alerts.maintenanceWindows(),
    ...options.statusPage,
  });
  const recorder = (refusals = new RefusalRecorder(
    auth.audit,
    refusalAudit,
    () => null,
    new RefusalAuditLimiter(ANONYMOUS_REFUSALS_PER_MINUTE, options.clock, ANONYMOUS_REFUSALS_TOTAL_PER_MINUTE),
  ));
  const oidc = config.oidc
    ? new OidcSignIn({
        config: config.oidc,
        auth,
        clock: options.clock,
        ...options.oidc,
        recordEarlyRefusal: (r) =>
          recorder.record({ sourceAddr: r.sourceAddr }, null, {
            host: null,
            unit: null,
            action: "login",
            reason: r.reason,
            outcome: "refused",
            detail: r.detail,
          }),
      })
    : null;
  const services: PanelServices = {
    demo: config.demo,
    auth,
    fleet,
    hostStore,
    settler,
    store,
    events,
    streams,
    refusals: recorder,
    oidc,
    alerts,
    push,
    statusPage,
    shutdown: shutdown.signal,
    queries: new QueryRateLimiter(config.queriesPerMinute),
  };
  const endpoint: PanelEndpoint = { config, services };

  let pruneTimer: ReturnType<typeof setInterval> | null = null;
  let hostsTimer: ReturnType<typeof setInterval> | null = null;
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
      signedIn: async (req) =>
        config.demo ||
        (await auth
          .authenticate({ remoteAddress: peerAddress(req.headers), headers: req.headers, secure: config.secureCookies })
          .then((who) => who.ok && !("enrolTwoFactor" in who && who.enrolTwoFactor))
          .catch(() => false)),
      shutdown: shutdown.signal,
      clientKey: (req) => {
        const address = clientAddress(req.headers, config);
        return address === null ? null : addressBucket(address);
      },
    },
    handle: (req) => handlePanelRequest(req, endpoint),
    handleAuditCsv: (req) => handleAuditCsvRequest(req, endpoint),
    oidc,
    handleOidc: (req) => handleOidcRequest(req, { config, signIn: oidc, dialect: store.dialect }),
    health: () => panelHealth(store, events),
    prune: async () => {
      const audit = await auth.audit.pruneAudit(config.auditRetentionMs);
      const sessions = await auth.sessions.pruneExpiredSessions();
      const { db } = await store.get();
      await pruneEvents(db, (options.clock ?? Date.now)() - EVENTS_KEPT_MS);
      await auth.limiter.pruneExpired();
      return { audit, sessions };
    },
    syncHosts,
    close: async () => {
      shutdown.abort();
      alerts.stop();
      fleet.stop();
      if (pruneTimer) clearInterval(pruneTimer);
      if (hostsTimer) clearInterval(hostsTimer);
      await events.stop();
      await store.close();
    },
  };

  if (options.background !== false) {
    const prune = async () => {
      try {
        const n = await panel.prune();
        if (n.audit > 0) log(`audit retention: removed ${n.audit} entries older than ${Math.round(config.auditRetentionMs / DAY)} days`);
      } catch (err) {
        log(`pruning failed: ${unreachableReason(err)}`);
      }
    };
    await prune();
    pruneTimer = setInterval(() => void prune(), DAY);
    pruneTimer.unref();
    fleet.start();
    alerts.start();
    events.start();
    if (stored === null) {
      // the stored hosts could not be read at start: try until they are
      hostsTimer = setInterval(() => {
        void syncHosts().then(
          () => {
            if (hostsTimer) clearInterval(hostsTimer);
            hostsTimer = null;
          },
          () => undefined,
        );
      }, 5000);
      hostsTimer.unref();
    }
    if (!config.demo) {
      const base = config.publicUrl ?? options.panelUrl ?? "http://127.0.0.1:3000";
      await announceSetup({ auth, dataDir: config.dataDir, base, interactive: options.interactive ?? false, log, shared: store.dialect === "postgres" }).catch(
        (err: unknown) => log(`no setup link: the panel database cannot be reached (${unreachableReason(err)})`),
      );
    }
  }
  return panel;
}

const KEY = Symbol.for("gpudeck.panel");
const READY = Symbol.for("gpudeck.panelReady");
type Holder = { [KEY]?: Promise<Panel>; [READY]?: Panel };

/** The process's panel, created from the environment on first use (a failed start is tried again by the next call). */
export function getPanel(options?: CreatePanelOptions): Promise<Panel> {
  const g = globalThis as Holder;
  g[KEY] ??= createPanel(loadPanelConfig(), options).then(
    (panel) => (g[READY] = panel),
    (err: unknown) => {
      delete g[KEY];
      throw err;
    },
  );
  return g[KEY];
}

/** The process's panel if one was created and is ready (no side effects). */
export function existingPanel(): Panel | null {
  return (globalThis as Holder)[READY] ?? null;
}

/**
 * Shutdown, step one: end every browser stream with a retryable error, so the HTTP server can
 * close. serve.ts calls it on SIGTERM/SIGINT, then closes the server and the panel.
 */
export function shutdownPanel(): void {
  existingPanel()?.shutdown.abort();
}
