/**
 * Test-only: the built panel as real processes (`node --import tsx server/panel/serve.ts`, what
 * `npm start` runs), one per replica, each on its own port and data dir, all on one PostgreSQL,
 * and a browser's side of them over plain HTTP: tRPC calls with the headers a same-origin tab
 * sends, cookies, and SSE streams read as they arrive.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildIsFresh } from "../../scripts/buildFreshness";
import { decodeSse } from "../../server/panel/panelTestHarness";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Where the build is: GPUDECK_DIST_DIR or .next, as next.config.ts says. */
export const DIST_DIR = process.env.GPUDECK_DIST_DIR || ".next";

/**
 * A build of the current sources (the rule of scripts/run.ts: BUILD_ID newer than every source),
 * made when missing. Resolves to null, or why no build can be had (the caller skips, or fails in CI).
 */
export async function ensureBuild(log: (m: string) => void): Promise<string | null> {
  if (buildIsFresh(ROOT, DIST_DIR)) return null;
  log(`building the panel into ${DIST_DIR} (next build)…`);
  let output = "";
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, "node_modules/next/dist/bin/next"), "build"], {
      cwd: ROOT,
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (c) => resolve(c ?? 1));
    child.on("error", () => resolve(127));
  });
  return code === 0 ? null : `next build failed (exit ${code}): ${output.slice(-1500)}`;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === "object" && addr ? addr.port : 0));
    });
  });
}

export interface Replica {
  name: string;
  port: number;
  origin: string;
  output(): string;
  /** SIGKILL: the replica dies at once, as a crashed machine's would */
  kill(): Promise<void>;
  /** SIGTERM, then remove its data dir */
  stop(): Promise<void>;
}

/** Start one replica and wait until it says it is ready (or fail with its output). */
export async function startReplica(name: string, env: Record<string, string>, timeoutMs = 60_000): Promise<Replica> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), `gpudeck-replica-${name}-`));
  let output = "";
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "server/panel/serve.ts"], {
    cwd: ROOT,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", HOSTNAME: "127.0.0.1", PORT: String(port), GPUDECK_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + timeoutMs;
  while (!/\[panel\] ready on/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`replica ${name} did not start:\n${output.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    name,
    port,
    origin: `http://127.0.0.1:${port}`,
    output: () => output,
    kill: () => end("SIGKILL"),
    stop: async () => {
      await end("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RpcReply {
  status: number;
  headers: Headers;
  data: unknown;
  message: string | null;
}

/** A tRPC call as a same-origin tab makes it: GET for queries, POST (JSON, Origin) for mutations. */
export async function rpc(replica: Replica, procedure: string, input: unknown, opts: { cookie?: string; mutation?: boolean } = {}): Promise<RpcReply> {
  const mutation = opts.mutation ?? true;
  const url = `${replica.origin}/api/trpc/${procedure}${mutation || input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`;
  const res = await fetch(url, {
    method: mutation ? "POST" : "GET",
    headers: {
      "sec-fetch-site": "same-origin",
      ...(mutation ? { origin: replica.origin, "content-type": "application/json" } : {}),
      ...(opts.cookie ? { cookie: opts.cookie } : {}),
    },
    body: mutation ? JSON.stringify(input ?? null) : undefined,
  });
  const json = (await res.json().catch(() => null)) as { result?: { data?: unknown }; error?: { message?: string } } | null;
  return { status: res.status, headers: res.headers, data: json?.result?.data, message: json?.error?.message ?? null };
}

export function sessionCookie(headers: Headers): string {
  const set = headers.getSetCookie().find((c) => c.startsWith("gpudeck_session="));
  if (!set) throw new Error("no session cookie was set");
  return set.split(";")[0]!;
}

export interface SseEvent {
  id: string | null;
  data: string;
}

/** A browser's EventSource on events.watch, read in the background; `lastEventId` resumes. */
export function openStream(replica: Replica, cookie: string, input: unknown, lastEventId: string | null = null) {
  const ctl = new AbortController();
  const events: SseEvent[] = [];
  let buffer = "";
  let status = 0;
  const done = (async () => {
    const res = await fetch(`${replica.origin}/api/trpc/events.watch?input=${encodeURIComponent(JSON.stringify(input))}`, {
      headers: { accept: "text/event-stream", "sec-fetch-site": "same-origin", cookie, ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
      signal: ctl.signal,
    });
    status = res.status;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      buffer += decoder.decode(next.value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1] ?? null;
        const data = decodeSse(
          block
            .split("\n")
            .filter((l) => l.startsWith("data: "))
            .join("\n"),
        ).replace(/^data: /gm, "");
        if (data) events.push({ id, data });
      }
    }
  })().catch(() => undefined);
  return {
    events,
    status: () => status,
    /** the first event (from `from` on) whose data matches, within `timeoutMs` */
    async until(pattern: RegExp, timeoutMs = 10_000, from = 0): Promise<SseEvent> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = events.slice(from).find((e) => pattern.test(e.data));
        if (hit) return hit;
        if (Date.now() > deadline)
          throw new Error(`no ${pattern} on ${replica.name}'s stream within ${timeoutMs} ms; last: ${events.at(-1)?.data.slice(0, 300)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      ctl.abort();
      await done;
    },
  };
}
