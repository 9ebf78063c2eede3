/**
 * The panel's HTTP server: Next.js (built app, programmatic API) on node:http, owning the
 * sockets so the panel knows who it is talking to.
 * - Every request: any incoming `x-gpudeck-peer` header is dropped and replaced by the TCP peer
 *   address (socket.remoteAddress); the panel reads the client address only from it, never from
 *   X-Forwarded-For. The Host must be one of the panel's names (DNS-rebinding guard), except
 *   for `/healthz`, which load balancers ask with whatever Host they send (or none).
 * - Page requests without a valid session are redirected to /login (not in demo mode). The API
 *   still checks every call itself; this only spares people a page of errors.
 * - `/healthz` (no sign-in): the database and the LISTEN connection as JSON, 200 or 503 (./health.ts).
 * - `/api/trpc/…` goes to the panel's handler directly (./webBridge.ts), everything else to Next.
 * - SIGTERM/SIGINT: open browser streams end with a retryable error, the server closes, the
 *   process exits within 2 s even with SSE clients connected.
 * Run: `node --import tsx server/panel/serve.ts` (HOSTNAME, PORT; see config.ts for the rest).
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { clearSessionCookie } from "../auth/sessions";
import { isDatabaseUnreachable, unavailableSentence } from "../store/unavailable";
import { applyConfigFileOrExit } from "../config/configFile";
import { loadPanelConfig } from "./config";
import { PEER_HEADER, trustPeerHeader } from "./context";
import { checkDemoHosts } from "./demoCheck";
import { getPanel, shutdownPanel, type Panel } from "./instance";
import { hostAllowed, hostName } from "./requestGuard";
import { BRIDGED_PATH, serveWebHandler } from "./webBridge";

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** Replace whatever the client sent as PEER_HEADER with the socket's peer address. */
export function setPeerHeader(req: IncomingMessage): void {
  delete req.headers[PEER_HEADER];
  for (let i = req.rawHeaders.length - 2; i >= 0; i -= 2) {
    if (req.rawHeaders[i]!.toLowerCase() === PEER_HEADER) req.rawHeaders.splice(i, 2);
  }
  const peer = req.socket.remoteAddress;
  if (peer) {
    req.headers[PEER_HEADER] = peer;
    req.rawHeaders.push(PEER_HEADER, peer);
  }
}

/** The status page (`/status`, `/status/<token>`): it checks its own switch and token (server/statusPage/http.ts). */
export const STATUS_PAGE_PATH = /^\/status(\/[^/]+)?\/?$/;

/** The installable app's files (browsers fetch the manifest without cookies): no data in them. */
const APP_FILES = [/^\/manifest\.webmanifest$/, /^\/sw\.js$/, /^\/icon(-\d+)?\.(png|svg)$/];

/** Paths anyone may load: sign-in and setup pages, Next's assets, the API and the status page (they check themselves). */
const PUBLIC_PATHS = [/^\/_next\//, /^\/api\//, /^\/login\/?$/, /^\/setup\/?$/, /^\/favicon\.ico$/, /^\/robots\.txt$/, STATUS_PAGE_PATH, ...APP_FILES];

/** Where a page request must go instead (the sign-in page), or null to serve it. */
export async function pageRedirect(req: IncomingMessage, panel: Pick<Panel, "config" | "auth">): Promise<{ location: string; clearCookie: boolean } | null> {
  if (panel.config.demo || (req.method !== "GET" && req.method !== "HEAD")) return null;
  const url = new URL(req.url ?? "/", "http://panel");
  if (PUBLIC_PATHS.some((re) => re.test(url.pathname))) return null;
  const who = await panel.auth.authenticate({
    remoteAddress: req.socket.remoteAddress ?? null,
    headers: req.headers,
    secure: panel.config.secureCookies,
  });
  if (who.ok) return null;
  const next = `${url.pathname}${url.search}`;
  return { location: next === "/" ? "/login" : `/login?next=${encodeURIComponent(next)}`, clearCookie: who.clearCookie };
}

/**
 * Slow clients must not hold sockets for ever, and live streams (SSE) must last: Node's
 * requestTimeout bounds receiving the request (headers and body), never the response, so an
 * event stream is not cut; the idle timeout only ends sockets with no traffic at all (streams
 * send a ping every 10 s).
 */
export interface ServerTimeouts {
  /** all request headers within this (slowloris) */
  headersMs: number;
  /** the whole request, body included, within this */
  requestMs: number;
  /** a socket with no traffic either way for this long is closed */
  idleMs: number;
  /** an idle keep-alive connection between requests */
  keepAliveMs: number;
  /** how often Node checks the first two */
  checkIntervalMs: number;
}

export const SERVER_TIMEOUTS: Readonly<ServerTimeouts> = Object.freeze({
  headersMs: 15_000,
  requestMs: 30_000,
  idleMs: 120_000,
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
});

export interface PanelServerOptions {
  /** Next's request handler (or any handler, in tests). */
  handle: RequestHandler;
  /** null: no page gate and no /healthz (tests of the plumbing). */
  panel: (Pick<Panel, "config" | "auth"> & Partial<Pick<Panel, "health" | "handle">>) | null;
  timeouts?: Partial<ServerTimeouts>;
}

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" }).end(text);
}

/**
 * `/healthz`, whatever the Host: load balancers' checks often send none or the backend's address
 * (HAProxy's `option httpchk GET /healthz` sends HTTP/1.0 without Host), and it holds nothing a
 * rebinding page could use. True when the request was answered here.
 */
async function answeredHealth(req: IncomingMessage, res: ServerResponse, panel: NonNullable<PanelServerOptions["panel"]>): Promise<boolean> {
  if (!panel.health || (req.method !== "GET" && req.method !== "HEAD") || new URL(req.url ?? "/", "http://panel").pathname !== "/healthz") return false;
  const health = await panel.health();
  res.writeHead(health.ok ? 200 : 503, { "Content-Type": "application/json", "Cache-Control": "no-store" }).end(`${JSON.stringify(health)}\n`);
  return true;
}

/** The page gate: true when the request was answered here. */
async function answeredHere(req: IncomingMessage, res: ServerResponse, panel: NonNullable<PanelServerOptions["panel"]>): Promise<boolean> {
  const { config } = panel;
  let redirect: Awaited<ReturnType<typeof pageRedirect>> = null;
  try {
    redirect = await pageRedirect(req, panel);
  } catch (err) {
    if (isDatabaseUnreachable(err)) {
      // the page says so: a replica that lost its database serves no page that would only fail
      plain(res, 503, `${unavailableSentence(config.databaseUrl ? "postgres" : "sqlite", err)}\n`);
      return true;
    }
    console.error(`[panel] session check failed: ${(err as Error).message}`);
    plain(res, 500, "The panel could not check your session.\n");
    return true;
  }
  if (!redirect) return false;
  const headers: http.OutgoingHttpHeaders = { Location: redirect.location, "Cache-Control": "no-store" };
  if (redirect.clearCookie) headers["Set-Cookie"] = clearSessionCookie({ secure: config.secureCookies });
  res.writeHead(303, headers).end();
  return true;
}

export function createPanelServer(options: PanelServerOptions): http.Server {
  const t = { ...SERVER_TIMEOUTS, ...options.timeouts };
  const serverOptions = {
    headersTimeout: t.headersMs,
    requestTimeout: t.requestMs,
    connectionsCheckingInterval: t.checkIntervalMs,
    keepAliveTimeout: t.keepAliveMs,
  };
  const server = http.createServer(serverOptions, (req, res) => {
    setPeerHeader(req);
    const panel = options.panel;
    const fail = (err: Error) => {
      console.error(`[panel] request failed: ${err.message}`);
      if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
      res.end();
    };
    if (panel && !hostAllowed(req.headers.host ?? null, panel.config.allowedHosts)) {
      void answeredHealth(req, res, panel)
        .then((answered) => {
          if (answered) return;
          const name = (hostName(req.headers.host ?? null) ?? "").slice(0, 100);
          plain(res, 421, `This panel does not answer to the name '${name}'. Set GPUDECK_PUBLIC_URL or GPUDECK_ALLOWED_HOSTS to use it.\n`);
        })
        .catch(fail);
      return;
    }
    // the API goes straight to the panel's handler (./webBridge.ts); pages and assets to Next
    const bridge = panel?.handle;
    if (bridge && BRIDGED_PATH.test(req.url ?? "")) {
      void serveWebHandler(req, res, bridge).catch(fail);
      return;
    }
    void (async () => {
      if (panel && ((await answeredHealth(req, res, panel)) || (await answeredHere(req, res, panel)))) return;
      await options.handle(req, res);
    })().catch(fail);
  });
  server.timeout = t.idleMs;
  return server;
}

/**
 * Stop: end browser streams (retryable error), give them a moment to send it, close the
 * server and every socket still open. Resolves when closed; never takes longer than ~1 s.
 */
export async function stopPanelServer(server: http.Server, endStreams: () => void): Promise<void> {
  endStreams();
  await new Promise((r) => setTimeout(r, 150));
  const closed = new Promise<void>((r) => server.close(() => r()));
  server.closeIdleConnections();
  setTimeout(() => server.closeAllConnections(), 300).unref();
  await Promise.race([closed, new Promise((r) => setTimeout(r, 1000).unref())]);
  server.closeAllConnections();
}

async function main(): Promise<void> {
  // GPUDECK_CONFIG: the config file's panel keys become defaults for the variables read below
  applyConfigFileOrExit(process.env, "panel", { log: (m) => console.error(`[panel] ${m}`), validate: () => loadPanelConfig(process.env) });
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
  const host = process.env.HOSTNAME || "127.0.0.1";
  const port = Number(process.env.PORT || 3000);
  const urlHost = host.includes(":") ? `[${host}]` : host;
  trustPeerHeader();
  // npm start / npm run panel pipe our output; they say whether theirs is a terminal
  const interactive = process.stdout.isTTY === true || process.env.GPUDECK_INTERACTIVE === "1";
  const panel = await getPanel({ panelUrl: `http://${urlHost === "0.0.0.0" || urlHost === "[::]" ? "127.0.0.1" : urlHost}:${port}`, interactive });
  if (panel.config.demo) {
    const check = await checkDemoHosts(() => panel.fleet.all());
    if (check.real.length > 0) {
      for (const r of check.real) console.error(`[panel] host ${r.name}: ${r.message}`);
      console.error("[panel] refusing to start in demo mode. Use `npm run demo` (simulated hosts), or unset GPUDECK_DEMO to sign in to real ones.");
      await panel.close();
      process.exit(2);
    }
    if (check.silent.length > 0)
      console.log(`[panel] demo mode: no answer yet from ${check.silent.join(", ")}; nothing is done on a host until its agent says it is simulated`);
  }

  const { default: next } = await import("next");
  const app = next({ dev: false, dir: root, hostname: host, port });
  await app.prepare();
  const server = createPanelServer({ handle: app.getRequestHandler(), panel });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`[panel] ${signal}: shutting down`);
    setTimeout(() => process.exit(0), 1800).unref(); // whatever happens, gone within 2 s
    void stopPanelServer(server, shutdownPanel)
      .then(() => panel.close())
      .finally(() => process.exit(0));
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  console.log(`[panel] ready on http://${urlHost}:${port}${panel.config.demo ? " (demo mode: no login)" : ""}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: Error) => {
    console.error(`[panel] fatal: ${err.stack ?? err.message}`);
    process.exit(1);
  });
}
