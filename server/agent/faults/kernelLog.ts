/**
 * The kernel log, where the NVIDIA driver reports Xids: one long-lived
 * `journalctl -k -o json --lines=N --follow` (argv array, no shell). It first replays this
 * boot's last N kernel messages, then follows. Only lines that can hold an Xid ("NVRM") are
 * handed on; a line longer than 64 KiB is dropped. When journalctl exits or cannot be run, it
 * is restarted with capped backoff, continuing after the last message it delivered
 * (`--after-cursor`), and the problem is logged once a minute at most.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { KernelLogAdapter, KernelMessage } from "../adapter";
import { quietLog, type QuietLog } from "../quietLog";

export interface JournalctlKernelLogOptions {
  /** journalctl binary (default "journalctl" from PATH) */
  journalctl?: string;
  /** this boot's kernel messages replayed at start (default 5000) */
  backlogLines?: number;
  log?: (message: string) => void;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  env?: NodeJS.ProcessEnv;
}

const MAX_LINE_CHARS = 65_536;

/** One `journalctl -o json` line → a kernel message with its cursor, or null. Pure. */
export function parseKernelJournalLine(line: string): (KernelMessage & { cursor: string | null }) | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return null;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    return null;
  }
  const message = text(obj.MESSAGE);
  const usec = text(obj.__REALTIME_TIMESTAMP);
  if (message === null || usec === null || !/^\d{1,20}$/.test(usec)) return null;
  return { atMs: Math.floor(Number(usec) / 1000), message, cursor: text(obj.__CURSOR) };
}

/** journalctl's JSON field: a string, or a byte array when not valid UTF-8. */
function text(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "number")) return Buffer.from(v as number[]).toString("utf8");
  return null;
}

export function kernelLogArgs(backlogLines: number, afterCursor: string | null): string[] {
  const args = ["--dmesg", "--output=json", "--no-pager", "--quiet", "--follow"];
  args.push(afterCursor ? `--after-cursor=${afterCursor}` : `--lines=${backlogLines}`);
  return args;
}

export class JournalctlKernelLog implements KernelLogAdapter {
  private child: ChildProcess | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private attempt = 0;
  private cursor: string | null = null;
  private onMessage: (m: KernelMessage) => void = () => {};
  private readonly quiet: QuietLog;

  constructor(private readonly opts: JournalctlKernelLogOptions = {}) {
    this.quiet = quietLog(opts.log ?? (() => {}));
  }

  start(onMessage: (m: KernelMessage) => void): void {
    this.onMessage = onMessage;
    this.spawn();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const child = this.child;
    this.child = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 2000);
        child.once("close", () => {
          clearTimeout(t);
          resolve();
        });
        child.kill("SIGTERM");
      });
    }
  }

  private spawn(): void {
    if (this.closed) return;
    const bin = this.opts.journalctl ?? "journalctl";
    const args = kernelLogArgs(this.opts.backlogLines ?? 5000, this.cursor);
    let child: ChildProcess;
    try {
      child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], env: this.opts.env });
    } catch (err) {
      this.exited(`cannot run ${bin}: ${(err as Error).message}`);
      return;
    }
    this.child = child;
    const startedAt = Date.now();
    let buffer = "";
    let stderr = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        this.line(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
      if (buffer.length > MAX_LINE_CHARS) buffer = "";
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (d: string) => {
      stderr = (stderr + d).slice(-2000);
    });
    let done = false;
    const finish = (why: string) => {
      if (done) return;
      done = true;
      if (this.child === child) this.child = null;
      // a reader that ran for a while has earned a fresh backoff
      if (Date.now() - startedAt > 60_000) this.attempt = 0;
      this.exited(why);
    };
    child.on("error", (err) => finish(`cannot run ${bin}: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    child.on("close", (code, signal) => finish(`${bin} -k exited (${signal ?? `code ${code}`})${stderr.trim() ? `: ${stderr.trim().split("\n").pop()}` : ""}`));
  }

  private line(line: string): void {
    if (!line.includes("NVRM")) {
      // cursors of other lines still move the resume point
      const c = /"__CURSOR"\s*:\s*"([^"]{1,500})"/.exec(line);
      if (c) this.cursor = c[1]!;
      return;
    }
    const m = parseKernelJournalLine(line);
    if (!m) return;
    if (m.cursor) this.cursor = m.cursor;
    this.quiet.recovered("kernel log: reading again");
    try {
      this.onMessage({ atMs: m.atMs, message: m.message });
    } catch {
      // a consumer's failure must not stop the reader
    }
  }

  private exited(why: string): void {
    if (this.closed) return;
    const base = this.opts.backoffBaseMs ?? 1000;
    const delay = Math.min(this.opts.backoffMaxMs ?? 60_000, base * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    this.quiet.repeat(why, `kernel log (GPU faults): ${why}; retrying in ${Math.round(delay / 1000)} s`);
    this.timer = setTimeout(() => this.spawn(), delay);
    this.timer.unref?.();
  }
}
