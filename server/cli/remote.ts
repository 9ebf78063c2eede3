/**
 * `gpudeck units | restart | start | stop | logs`: the panel's API for scripts and terminals, on
 * the typed tRPC client with an API token (./client.ts). Exit status: 0 reached, 1 failed (the
 * panel's diagnosis on stderr), 2 usage, 3 timed out, 4 refused by the panel (the reason on stderr).
 * The logic takes its streams and environment as arguments (tests); ./main.ts wires the process.
 */
import { parseArgs } from "node:util";
import { TRPCClientError } from "@trpc/client";
import { hostNameProblem, type PanelEvent } from "../contract/fleet";
import type { JournalEntry, UnitSummary } from "../contract/types";
import { unitNameProblem } from "../contract/unitNames";
import { ConfigProblem, connectionFromEnv, createPanelClient, type PanelClient } from "./client";
import { formatDuration, parseDuration } from "./duration";
import { ActionFollower, type UnitVerb, type Verdict, type WaitFor } from "./follow";
import { REMOTE_HELP } from "./help";

export const EXIT = { ok: 0, failed: 1, usage: 2, timeout: 3, refused: 4 } as const;
export const REMOTE_COMMANDS = ["units", "restart", "start", "stop", "logs"] as const;

export interface RemoteIo {
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Aborted on Ctrl-C: a follow ends (the action goes on in the panel). */
  signal?: AbortSignal;
}

class Usage extends Error {}
/** A result with its exit status and the sentence for stderr. */
class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const UNIT_SUFFIX = /\.(service|socket|target|timer|mount|path|slice|scope|device|swap|automount)$/;

/** `gpu-a:vllm-llama` → { host: "gpu-a", name: "vllm-llama.service" } */
export function parseTarget(text: string | undefined): { host: string; name: string } {
  if (!text) throw new Usage("name the unit as HOST:UNIT, e.g. gpu-a:vllm-llama");
  const i = text.indexOf(":");
  if (i <= 0 || i === text.length - 1) throw new Usage(`'${text}' is not HOST:UNIT (e.g. gpu-a:vllm-llama)`);
  const host = text.slice(0, i);
  const unit = text.slice(i + 1);
  const name = UNIT_SUFFIX.test(unit) ? unit : `${unit}.service`;
  const problem = hostNameProblem(host) ?? unitNameProblem(name);
  if (problem) throw new Usage(problem);
  return { host, name };
}

/** A panel refusal or an unreachable panel, as an exit status and a sentence. */
export function exitFor(err: unknown, url: string): Exit {
  if (err instanceof Exit) return err;
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: string } | undefined)?.code;
    const message = String(err.message || code || "refused");
    if (code === undefined || code === "INTERNAL_SERVER_ERROR" || code === "SERVICE_UNAVAILABLE") {
      const cause = (err.cause as Error | undefined)?.message;
      return new Exit(EXIT.failed, code ? `the panel answered: ${message}` : `cannot reach the panel at ${url}: ${cause ?? message}`);
    }
    return new Exit(EXIT.refused, `refused by the panel: ${message}`);
  }
  return new Exit(EXIT.failed, `${(err as Error).message ?? String(err)}`);
}

const pad = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join("  ")
          .trimEnd(),
      )
      .join("\n") + "\n"
  );
};

function readinessText(u: UnitSummary): string {
  const r = u.readiness;
  if (!r || r.state === "unknown") return "-";
  if (r.state === "loading") return `loading${r.stage ? `: ${r.stage}` : ""}${r.progress ? ` ${r.progress.done}/${r.progress.total}` : ""}`;
  return r.state;
}

async function unitsCommand(client: PanelClient, host: string | undefined, json: boolean, io: RemoteIo): Promise<number> {
  if (host !== undefined && hostNameProblem(host)) throw new Usage(hostNameProblem(host)!);
  const { units, hosts } = await client.units.list.query();
  if (host !== undefined && !hosts.some((h) => h.name === host)) {
    throw new Exit(EXIT.refused, `there is no host named ${host} in this panel (hosts: ${hosts.map((h) => h.name).join(", ") || "none"})`);
  }
  const shown = units.filter((u) => host === undefined || u.host === host).sort((a, b) => a.host.localeCompare(b.host) || a.name.localeCompare(b.name));
  if (json) {
    io.stdout.write(`${JSON.stringify({ hosts: hosts.filter((h) => host === undefined || h.name === host), units: shown }, null, 2)}\n`);
    return EXIT.ok;
  }
  const down = hosts.filter((h) => (host === undefined || h.name === host) && h.state !== "connected");
  for (const h of down) io.stderr.write(`gpudeck: host ${h.name} is ${h.state}${h.error ? ` (${h.error})` : ""}: its units are as last known\n`);
  io.stdout.write(pad([["HOST", "UNIT", "STATE", "SUB", "READINESS"], ...shown.map((u) => [u.host, u.name, u.activeState, u.subState, readinessText(u)])]));
  return EXIT.ok;
}

/** Events of one subscription, handed out in order; an error ends it. */
function eventQueue() {
  const items: ({ event: PanelEvent } | { error: unknown })[] = [];
  let wake: (() => void) | null = null;
  const push = (item: (typeof items)[number]) => {
    if (items.length >= 10_000) items.shift(); // bounded: a stalled reader drops the oldest
    items.push(item);
    wake?.();
  };
  return {
    push,
    /** The next item, or null when `ms` passed first. */
    next(ms: number): Promise<(typeof items)[number] | null> {
      if (items.length) return Promise.resolve(items.shift()!);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          wake = null;
          resolve(null);
        }, ms);
        wake = () => {
          clearTimeout(timer);
          wake = null;
          resolve(items.shift() ?? null);
        };
      });
    },
  };
}

interface ActionOptions {
  verb: UnitVerb;
  target: { host: string; name: string };
  reason: string;
  wait: WaitFor;
  timeoutMs: number;
  whenGpusFree: boolean;
  confirm: boolean;
}

async function actionCommand(client: PanelClient, o: ActionOptions, io: RemoteIo): Promise<number> {
  const { host, name } = o.target;
  const t0 = Date.now();
  const stamp = () => `+${formatDuration(Date.now() - t0).padStart(4)}`;
  const follower = new ActionFollower(name, o.verb, o.wait, (line) => io.stdout.write(`${stamp()}  ${line}\n`));
  const queue = eventQueue();
  const sub = client.events.watch.subscribe(
    { watch: "unit", host, name },
    { onData: (item) => queue.push({ event: (item as { data: PanelEvent }).data }), onError: (error) => queue.push({ error }) },
  );
  const deadline = t0 + o.timeoutMs;
  const stop = () => queue.push({ error: new Exit(130, `interrupted; the ${o.verb} goes on in the panel`) });
  io.signal?.addEventListener("abort", stop, { once: true });
  try {
    // the stream's first event is the unit as it is: the state before the action
    let first: Awaited<ReturnType<typeof queue.next>> = null;
    while (first === null || ("event" in first && first.event.kind !== "host-snapshot")) {
      first = await queue.next(15_000);
      if (first === null) throw new Exit(EXIT.failed, `the panel's event stream for ${host} did not start within 15 s`);
      if ("error" in first) throw first.error;
    }
    const snapshot = first.event as Extract<PanelEvent, { kind: "host-snapshot" }>;
    follower.snapshot(snapshot.units.find((u) => u.name === name) ?? null);
    const mutate = o.verb === "restart" ? client.units.restart : o.verb === "start" ? client.units.start : client.units.stop;
    const gpu = o.whenGpusFree ? { waitForGpus: true, timeoutMs: Math.min(o.timeoutMs, 86_400_000) } : {};
    const answer = await mutate.mutate({ host, name, reason: o.reason, ...(o.confirm ? { confirmed: true } : {}), ...gpu });
    let verdict: Verdict = follower.sent(answer as { jobId?: number | null; operationId?: string | null });
    while (verdict === null) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Exit(EXIT.timeout, `timed out after ${formatDuration(o.timeoutMs)} waiting for ${name} to be ${o.wait}; the ${o.verb} goes on in the panel`);
      }
      const item = await queue.next(left);
      if (item === null) continue;
      if ("error" in item) throw item.error;
      verdict = follower.event(item.event);
    }
    if (verdict.ok) {
      io.stdout.write(`${stamp()}  ${verdict.message}\n`);
      return EXIT.ok;
    }
    throw new Exit(EXIT.failed, `${verdict.message}${await diagnosis(client, host, name)}`);
  } finally {
    io.signal?.removeEventListener("abort", stop);
    sub.unsubscribe();
  }
}

/** The panel's diagnosis of the unit, as " — headline. Next: step", or "" when none is to be had. */
async function diagnosis(client: PanelClient, host: string, name: string): Promise<string> {
  try {
    const d = await client.units.diagnose.query({ host, name });
    return d.severity === "ok" ? "" : ` — ${d.headline}${d.nextStep ? ` Next: ${d.nextStep.text}` : ""}`;
  } catch {
    return "";
  }
}

function journalLine(e: JournalEntry): string {
  const at = new Date(Math.floor(e.atUsec / 1000)).toISOString().replace(/\.\d{3}Z$/, "Z");
  return `${at} ${e.unit}${e.pid ? `[${e.pid}]` : ""}: ${e.message}\n`;
}

async function logsCommand(
  client: PanelClient,
  target: { host: string; name: string },
  o: { follow: boolean; sinceMs: number | null; lines: number },
  io: RemoteIo,
) {
  const entries = await client.units.journal.query({ ...target, lines: o.lines });
  const from = o.sinceMs === null ? -Infinity : Date.now() - o.sinceMs;
  const seen = new Set<string>();
  for (const e of entries) {
    seen.add(e.cursor);
    if (e.atUsec / 1000 >= from) io.stdout.write(journalLine(e));
  }
  if (!o.follow) return EXIT.ok;
  const queue = eventQueue();
  const last = entries.at(-1)?.cursor ?? null;
  const sub = client.units.followJournal.subscribe(
    { ...target, lastEventId: last },
    { onData: (item) => queue.push({ event: (item as { data: unknown }).data as PanelEvent }), onError: (error) => queue.push({ error }) },
  );
  const stop = () => queue.push({ error: new Exit(EXIT.ok, "") });
  io.signal?.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const item = await queue.next(60_000);
      if (item === null) continue;
      if ("error" in item) throw item.error;
      const e = item.event as unknown as JournalEntry;
      if (seen.has(e.cursor)) continue;
      if (seen.size > 5000) seen.clear();
      seen.add(e.cursor);
      io.stdout.write(journalLine(e));
    }
  } finally {
    io.signal?.removeEventListener("abort", stop);
    sub.unsubscribe();
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      reason: { type: "string" },
      wait: { type: "string" },
      timeout: { type: "string" },
      "when-gpus-free": { type: "boolean" },
      confirm: { type: "boolean" },
      follow: { type: "boolean", short: "f" },
      since: { type: "string" },
      lines: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

/** Run one command (`argv[0]` is units, restart, start, stop or logs); returns the exit status. */
export async function runRemoteCli(argv: readonly string[], io: RemoteIo, makeClient = createPanelClient): Promise<number> {
  const fail = (code: number, message: string) => {
    if (message) io.stderr.write(`gpudeck: ${message}\n`);
    return code;
  };
  let url = "";
  try {
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (err) {
      throw new Usage((err as Error).message);
    }
    const { values: v, positionals } = parsed;
    const [command, ...args] = positionals;
    if (v.help || command === undefined) {
      (v.help ? io.stdout : io.stderr).write(REMOTE_HELP);
      return v.help ? EXIT.ok : EXIT.usage;
    }
    if (!(REMOTE_COMMANDS as readonly string[]).includes(command)) throw new Usage(`unknown command '${command}'`);
    const verb = command as (typeof REMOTE_COMMANDS)[number];
    const maxArgs = 1;
    if (args.length > maxArgs) throw new Usage(`${verb} takes one ${verb === "units" ? "HOST" : "HOST:UNIT"}, not ${args.length} arguments`);
    const timeoutMs = v.timeout === undefined ? 20 * 60_000 : parseDuration(v.timeout);
    if (timeoutMs === null) throw new Usage(`--timeout takes a duration like 90s, 20m or 1h, not '${v.timeout}'`);
    const sinceMs = v.since === undefined ? null : parseDuration(v.since);
    if (sinceMs === null && v.since !== undefined) throw new Usage(`--since takes a duration like 10m or 2h, not '${v.since}'`);
    const lines = v.lines === undefined ? 200 : Number(v.lines);
    if (!Number.isInteger(lines) || lines < 1 || lines > 2000) throw new Usage(`--lines takes a number from 1 to 2000, not '${v.lines}'`);
    const actionOnly = ["reason", "wait", "timeout", "when-gpus-free", "confirm"] as const;
    if (verb === "units" || verb === "logs") {
      const stray = actionOnly.find((k) => v[k] !== undefined);
      if (stray) throw new Usage(`--${stray} is for restart, start and stop`);
    }
    if (verb !== "logs" && (v.follow || v.since !== undefined || v.lines !== undefined)) throw new Usage("-f, --since and --lines are for logs");
    if (verb !== "units" && v.json) throw new Usage("--json is for units");
    let action: ActionOptions | null = null;
    if (verb === "restart" || verb === "start" || verb === "stop") {
      const target = parseTarget(args[0]);
      const reason = v.reason?.trim();
      if (!reason) throw new Usage(`${verb} needs --reason TEXT (it goes into the audit log)`);
      if (reason.length > 500) throw new Usage("--reason is longer than 500 characters");
      const wait = (v.wait ?? (verb === "stop" ? "inactive" : "serving")) as WaitFor;
      const allowed: WaitFor[] = verb === "stop" ? ["inactive"] : ["serving", "running"];
      if (!allowed.includes(wait)) throw new Usage(`${verb} --wait takes ${allowed.join(" or ")}, not '${v.wait}'`);
      if (verb === "stop" && v["when-gpus-free"]) throw new Usage("--when-gpus-free is for restart and start");
      action = { verb, target, reason, wait, timeoutMs, whenGpusFree: v["when-gpus-free"] === true, confirm: v.confirm === true };
    }
    const target = verb === "logs" ? parseTarget(args[0]) : null;
    const conn = connectionFromEnv(io.env, io.home);
    url = conn.url;
    const client = makeClient(conn);
    if (action) return await actionCommand(client, action, io);
    if (target) return await logsCommand(client, target, { follow: v.follow === true, sinceMs, lines }, io);
    return await unitsCommand(client, args[0], v.json === true, io);
  } catch (err) {
    if (err instanceof Usage) return fail(EXIT.usage, `${err.message}\n(gpudeck ${argv[0] ?? ""} --help for the manual)`);
    if (err instanceof ConfigProblem) return fail(EXIT.usage, err.message);
    const e = exitFor(err, url);
    return fail(e.code, e.message);
  }
}
