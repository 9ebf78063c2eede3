/**
 * Test-only: a real agent on a simulated host (127.0.0.1, random port) and a real panel (temp
 * data dir, real SQLite, or PostgreSQL through GPUDECK_DATABASE_URL, and real argon2) in front of it, plus helpers that build HTTP requests the
 * way a browser (or an attacker) would and send them through the panel's real endpoint
 * (`Panel.handle`, what app/api/trpc/[trpc]/route.ts calls). Not part of the panel.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAgent, type RunningAgent } from "../agent/main";
import type { Role } from "../contract/actors";
import { wireTransformer } from "../contract/wire";
import { loadPanelConfig } from "./config";
import { trustPeerHeader, PEER_HEADER } from "./context";
import { createPanel, type CreatePanelOptions, type Panel } from "./instance";

export const ORIGIN = "http://127.0.0.1:3000";
export const PEER = "10.20.30.40";
export const PASSWORD = "correct horse battery staple";
/** The test agent's host name in the panel (GPUDECK_AGENT_NAME). */
export const HOST = "test-host";

export class TestClock {
  offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
}

export async function startTestAgent(options: { token?: string; port?: number; dataDir?: string } = {}): Promise<RunningAgent> {
  // the simulator reads its speed from the environment; 20× keeps restarts well under a second
  process.env.GPUDECK_SIM_SPEED ??= "20";
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(path.join(tmpdir(), "gpudeck-agent-"));
  const agent = await startAgent({
    host: "127.0.0.1",
    port: options.port ?? 0,
    token: options.token ?? "test-agent-token-0123456789abcdefghijklmnop",
    unitGlobs: ["vllm-*.service"],
    nvidiaSmiPath: "nvidia-smi",
    dataDir,
    simulate: true,
    gpuIntervalMs: 200,
  });
  if (ownDir) {
    const close = agent.close;
    agent.close = async () => {
      await close();
      rmSync(dataDir, { recursive: true, force: true });
    };
  }
  return agent;
}

export interface TestPanel {
  panel: Panel;
  dataDir: string;
  clock: TestClock;
  close(): Promise<void>;
}

/** A panel over `agent`; its database is SQLite in a temp dir unless `env` names GPUDECK_DATABASE_URL. */
export async function startTestPanel(
  agent: { url: string; token: string },
  options: { env?: Record<string, string>; panel?: CreatePanelOptions } = {},
): Promise<TestPanel> {
  trustPeerHeader(true);
  const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-panel-"));
  const clock = new TestClock();
  const config = loadPanelConfig({
    GPUDECK_DATA_DIR: dataDir,
    GPUDECK_AGENT_URL: agent.url,
    GPUDECK_AGENT_TOKEN: agent.token,
    GPUDECK_AGENT_NAME: HOST,
    ...options.env,
  });
  const panel = await createPanel(config, { clock: clock.now, log: () => {}, refusalAuditPerMinute: 10_000, ...options.panel });
  return {
    panel,
    dataDir,
    clock,
    close: async () => {
      await panel.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function addUser(panel: Panel, username: string, role: Role, unitPatterns: string[] = []): Promise<void> {
  await panel.auth.users.createUser({ username, password: PASSWORD, role, unitPatterns });
}

export interface RequestOptions {
  method?: string;
  /** JSON input (query string for GET, body for POST). */
  input?: unknown;
  /** Raw body instead of JSON.stringify(input). */
  body?: BodyInit | null;
  cookie?: string | null;
  contentType?: string | null;
  headers?: Record<string, string | null>;
  /** Accept: text/event-stream (a subscription). */
  sse?: boolean;
  query?: string;
}

/** A request as a same-origin browser tab sends it; every default can be overridden or removed (null). */
export function panelRequest(procedurePath: string, opts: RequestOptions = {}): Request {
  const method = opts.method ?? (opts.sse ? "GET" : "POST");
  let url = `${ORIGIN}/api/trpc/${procedurePath}`;
  const hasInput = opts.input !== undefined;
  if (method === "GET" && hasInput) url += `?input=${encodeURIComponent(JSON.stringify(opts.input))}`;
  if (opts.query) url += (url.includes("?") ? "&" : "?") + opts.query;
  const headers: Record<string, string | null> = {
    host: "127.0.0.1:3000",
    "sec-fetch-site": "same-origin",
    [PEER_HEADER]: PEER,
    "user-agent": "vitest",
    ...(method === "POST" ? { origin: ORIGIN, "content-type": "application/json" } : {}),
    ...(opts.sse ? { accept: "text/event-stream" } : {}),
    ...(opts.contentType !== undefined ? { "content-type": opts.contentType } : {}),
    ...(opts.cookie ? { cookie: opts.cookie } : {}),
    ...opts.headers,
  };
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== null) clean[k] = v;
  const body = method === "POST" || method === "PUT" ? (opts.body !== undefined ? opts.body : hasInput ? JSON.stringify(opts.input) : undefined) : undefined;
  return new Request(url, { method, headers: clean, body, duplex: "half" } as RequestInit);
}

export interface RpcResult {
  status: number;
  headers: Headers;
  json: { result?: { data?: unknown }; error?: { message: string; data?: { code?: string; httpStatus?: number } } } | null;
  text: string;
}

export async function send(panel: Panel, req: Request): Promise<RpcResult> {
  const res = await panel.handle(req);
  const text = await res.text();
  let json: RpcResult["json"] = null;
  try {
    json = JSON.parse(text) as RpcResult["json"];
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export async function call(panel: Panel, procedurePath: string, opts: RequestOptions = {}): Promise<RpcResult> {
  return send(panel, panelRequest(procedurePath, opts));
}

/** Sign in through session.login; returns the `name=value` cookie pair. */
export async function login(panel: Panel, username: string, password = PASSWORD, headers: Record<string, string | null> = {}): Promise<string> {
  const r = await call(panel, "session.login", { input: { username, password }, headers });
  if (r.status !== 200) throw new Error(`login ${username} failed: ${r.status} ${r.text}`);
  return cookiePair(r.headers);
}

export function cookiePair(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith("gpudeck_session=") || c.startsWith("__Host-gpudeck_session="));
  if (!set) throw new Error("no session cookie set");
  return set.split(";")[0]!;
}

/** Read an SSE response until `until` matches the text so far, or the timeout. */
export async function readSse(res: Response, until: (text: string) => boolean, timeoutMs = 5000): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timer = setTimeout(() => void reader.cancel().catch(() => {}), timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (until(text)) break;
    }
  } catch {
    // cancelled by the timeout
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return text;
}

/** An open events.watch stream through the endpoint, read incrementally. */
/** An SSE body with each `data:` payload decoded as the browser's client does (contract/wire.ts), so tests match plain JSON. */
export function decodeSse(text: string): string {
  return text.replace(/^data: (.*)$/gm, (line, payload: string) => {
    try {
      const value = wireTransformer.deserialize(JSON.parse(payload));
      return `data: ${typeof value === "string" ? value : JSON.stringify(value)}`;
    } catch {
      return line;
    }
  });
}

export function openEventStream(panel: Panel, cookie: string, input: unknown = { watch: "host", host: HOST }) {
  return openStream(panel, "events.watch", cookie, input);
}

/** Any subscription (events.watch, units.followJournal) through the endpoint, read incrementally. */
export async function openStream(panel: Panel, procedurePath: string, cookie: string, input: unknown, headers: Record<string, string | null> = {}) {
  const res = await panel.handle(panelRequest(procedurePath, { sse: true, input, cookie, headers }));
  if (res.status !== 200) throw new Error(`${procedurePath} answered ${res.status}: ${await res.text()}`);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
  return {
    async until(pattern: RegExp, timeoutMs = 5000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(decodeSse(text))) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`stream did not show ${pattern} within ${timeoutMs} ms:\n${decodeSse(text).slice(-500)}`);
        // a read that outlives a timeout is kept for the next call (its chunk must not be lost)
        pending ??= reader.read();
        const next = await Promise.race([pending, new Promise<null>((r) => setTimeout(() => r(null), left))]);
        if (next === null) continue;
        pending = null;
        if (next.done) break;
        text += decoder.decode(next.value, { stream: true });
      }
      const decoded = decodeSse(text);
      if (!pattern.test(decoded)) throw new Error(`stream ended without ${pattern}:\n${decoded.slice(-500)}`);
      return decoded;
    },
    close: () => reader.cancel().catch(() => {}),
  };
}

/** Resolves once the panel's stream to `host` is connected (fails after `timeoutMs`). */
export async function hostConnected(panel: Panel, host = HOST, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (panel.fleet.get(host)?.state !== "connected") {
    if (Date.now() > deadline) throw new Error(`host ${host} not connected within ${timeoutMs} ms: ${panel.fleet.get(host)?.error ?? "no such host"}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Headers of a script's call with an API token: no cookie, no Origin, no Sec-Fetch-Site. */
export function bearerHeaders(token: string): Record<string, string | null> {
  return { authorization: `Bearer ${token}`, origin: null, "sec-fetch-site": null, "user-agent": "gpudeck-cli" };
}
