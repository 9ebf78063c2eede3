/**
 * The real GpuAdapter: ONE long-lived `nvidia-smi --query-gpu=… --format=csv,nounits -lms N`
 * (one NVML init instead of one per sample, which costs seconds on big hosts without
 * persistence mode), plus `--query-compute-apps` one-shot calls that never overlap, made only
 * when some GPU's used memory moved since the last answer (a process that starts, exits or
 * grows moves it), and every `appsRefreshMs` regardless (default 5 s): starting nvidia-smi each
 * second was two thirds of the agent's CPU. A process killed while its memory is still held is
 * found at once from the last answer (its PID is gone from /proc). A watchdog marks telemetry stale when no complete round arrives within 3
 * intervals, SIGKILLs the loop and restarts it with capped backoff; every failure becomes a
 * status with a message, never an exception.
 *
 * Beside it: rounds.ts (streamed rows → rounds), computeApps.ts (the compute-apps call and when
 * to make it), queryFields.ts (the fields asked for, and fallbacks for old drivers),
 * samplerOptions.ts (options and defaults), childProcess.ts (spawn helpers).
 */
import { quietLog, type QuietLog } from "../quietLog";
import { spawn, type ChildProcess } from "node:child_process";
import type { BackendStatus, ComputeApp, GpuRawSample } from "../../contract/types";
import type { GpuAdapter } from "../adapter";
import { errCode, fmtSec, killAndWait, OUTPUT_TAIL_CHARS } from "./childProcess";
import { appsMaxAgeMs, memoryMoved, spawnComputeApps, type AppsOutcome } from "./computeApps";
import { columnIndex, describeNvidiaSmiFailure, errorLines, parseGpuRow, parseHeaderLine, type ColumnIndex } from "./csv";
import { DEFAULT_GPU_FIELDS, fallbackFields } from "./queryFields";
import { RoundAssembler, type GpuRound } from "./rounds";

import { samplerSettings, type NvidiaSmiAdapterOptions, type SamplerSettings } from "./samplerOptions";

export { RoundAssembler, type GpuRound } from "./rounds";
export type { NvidiaSmiAdapterOptions } from "./samplerOptions";

// ---------------------------------------------------------------------------------------
// The adapter

const MAX_LINE_CHARS = 65536;
/** After SIGKILL, how long before we say the process is stuck in the kernel. */
const KILL_GRACE_MS = 5000;

export class NvidiaSmiSampler implements GpuAdapter {
  private readonly cfg: SamplerSettings;
  private readonly log: (m: string) => void;
  /** restart-loop lines: the first of a failure, then at most one a minute */
  private readonly retryLog: QuietLog;

  private fields: string[] = [...DEFAULT_GPU_FIELDS];
  private onSample: (s: GpuRawSample) => void = () => {};
  private onStatus: (s: BackendStatus) => void = () => {};
  private current: BackendStatus = { state: "disabled", message: "not started", sinceMs: Date.now() };
  private started = false;
  private closed = false;

  // the loop process
  private loop: ChildProcess | null = null;
  private loopSpawnedAtMs = 0;
  private loopRounds = 0;
  private loopKilledByUs = false;
  private loopOutputTail = "";
  private loopWarnings: string[] = [];
  private lineBuffer = "";
  private header: ColumnIndex | null = null;
  private readonly assembler = new RoundAssembler();
  private quietTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private watchdogTimer: NodeJS.Timeout | null = null;
  private killCheckTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private everSampled = false;
  private lastSampleAtMs = 0;
  private gpuCount = 0;

  // compute apps
  private appsChild: ChildProcess | null = null;
  private appsTimer: NodeJS.Timeout | null = null;
  private appsOutcome: AppsOutcome | null = null;
  /** used MiB per GPU in the latest round, and in the round before the last compute-apps call began */
  private latestUsed = new Map<string, number | null>();
  private appsBasis: Map<string, number | null> | null = null;
  private appsStartedAtMs = 0;
  /** compute-apps calls started (tests and the bench read it) */
  appsCalls = 0;

  constructor(opts: NvidiaSmiAdapterOptions) {
    this.cfg = samplerSettings(opts);
    this.log = opts.log ?? (() => {});
    this.retryLog = quietLog(this.log, { everyMs: opts.quietLogMs });
  }

  start(onSample: (s: GpuRawSample) => void, onStatus: (s: BackendStatus) => void): void {
    if (this.started) throw new Error("GpuAdapter already started");
    this.started = true;
    this.onSample = onSample;
    this.onStatus = onStatus;
    this.setStatus("connecting", `starting ${this.cfg.path}`);
    this.spawnLoop();
    this.watchdogTimer = setInterval(() => this.watchdog(), Math.max(25, Math.floor(this.cfg.intervalMs / 2)));
    this.pollApps();
  }

  status(): BackendStatus {
    return { ...this.current };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of [this.quietTimer, this.restartTimer, this.appsTimer, this.killCheckTimer]) if (t) clearTimeout(t);
    if (this.watchdogTimer) clearInterval(this.watchdogTimer);
    const waits = [this.loop, this.appsChild].filter((c): c is ChildProcess => c !== null).map((c) => killAndWait(c));
    await Promise.all(waits);
    this.loop = null;
    this.appsChild = null;
  }

  // -------------------------------------------------------------------------------------
  // status

  private setStatus(state: BackendStatus["state"], message: string): void {
    if (this.closed) return;
    if (this.current.state === state && this.current.message === message) return;
    const sinceMs = this.current.state === state ? this.current.sinceMs : Date.now();
    this.current = { state, message, sinceMs };
    this.deliver("status", () => this.onStatus({ ...this.current }));
  }

  private okMessage(): string {
    const parts = [`${this.gpuCount} GPU${this.gpuCount === 1 ? "" : "s"}, every ${this.cfg.intervalMs} ms`];
    if (this.loopWarnings.length) parts.push(`nvidia-smi reports: ${this.loopWarnings.join("; ")}`);
    if (this.appsOutcome && !this.appsOutcome.ok) parts.push(`compute apps unavailable: ${this.appsOutcome.message}`);
    return parts.join(" — ");
  }

  // -------------------------------------------------------------------------------------
  // the loop process

  private loopArgs(): string[] {
    return [`--query-gpu=${this.fields.join(",")}`, "--format=csv,nounits", "-lms", String(this.cfg.intervalMs)];
  }

  private spawnLoop(): void {
    if (this.closed || this.loop) return;
    this.restartTimer = null;
    this.loopSpawnedAtMs = Date.now();
    this.loopRounds = 0;
    this.loopKilledByUs = false;
    this.loopOutputTail = "";
    this.loopWarnings = [];
    this.lineBuffer = "";
    this.header = null;
    this.assembler.reset();

    let child: ChildProcess;
    try {
      child = spawn(this.cfg.path, this.loopArgs(), { stdio: ["ignore", "pipe", "pipe"], env: this.cfg.env });
    } catch (e) {
      // spawn throws synchronously only for bad arguments (e.g. an empty path)
      this.loopFailed(describeNvidiaSmiFailure({ spawnErrorCode: errCode(e) ?? "EINVAL", path: this.cfg.path }));
      return;
    }
    this.loop = child;
    let finished = false;
    const finish = (message: string) => {
      if (finished) return;
      finished = true;
      if (this.loop === child) this.loop = null;
      if (this.killCheckTimer) clearTimeout(this.killCheckTimer);
      if (this.quietTimer) clearTimeout(this.quietTimer);
      if (this.closed) return;
      this.loopExited(message);
    };
    child.on("error", (err) => {
      finish(describeNvidiaSmiFailure({ spawnErrorCode: errCode(err) ?? err.message, path: this.cfg.path }));
    });
    child.on("close", (code, signal) => {
      finish(
        code === 0
          ? `nvidia-smi loop ended on its own (exit code 0)${this.loopOutputTail.trim() ? `: ${this.loopOutputTail.trim().split("\n").pop()}` : ""}`
          : describeNvidiaSmiFailure({ exitCode: code, signal, output: this.loopOutputTail, path: this.cfg.path }),
      );
    });
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      if (this.loop === child) this.onLoopData(chunk);
    });
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (this.loop === child) this.appendTail(chunk);
    });
    this.retryLog.repeat(`start:${this.current.message}`, `nvidia-smi: started pid ${child.pid ?? "?"}: ${this.cfg.path} ${this.loopArgs().join(" ")}`);
  }

  private appendTail(text: string): void {
    this.loopOutputTail = (this.loopOutputTail + text).slice(-OUTPUT_TAIL_CHARS);
  }

  private onLoopData(chunk: string): void {
    this.lineBuffer += chunk;
    let nl: number;
    while ((nl = this.lineBuffer.indexOf("\n")) >= 0) {
      const line = this.lineBuffer.slice(0, nl).replace(/\r$/, "");
      this.lineBuffer = this.lineBuffer.slice(nl + 1);
      this.onLine(line);
    }
    if (this.lineBuffer.length > MAX_LINE_CHARS) this.lineBuffer = ""; // not nvidia-smi CSV
    if (this.assembler.pending() > 0) {
      if (this.quietTimer) clearTimeout(this.quietTimer);
      this.quietTimer = setTimeout(() => {
        this.quietTimer = null;
        const round = this.assembler.flush();
        if (round) this.emitRound(round);
      }, this.cfg.quietGapMs);
    }
  }

  private onLine(line: string): void {
    if (line.trim() === "") return;
    const header = parseHeaderLine(line, "gpu");
    if (header) {
      this.header = columnIndex(header);
      return;
    }
    const row = this.header ? parseGpuRow(line, this.header) : null;
    if (!row) {
      this.appendTail(`${line}\n`);
      const errs = errorLines(line);
      if (errs.length && !this.loopWarnings.includes(errs[0])) {
        this.loopWarnings = [...this.loopWarnings, errs[0]].slice(-3);
      }
      return;
    }
    for (const round of this.assembler.push(row, Date.now())) this.emitRound(round);
  }

  private emitRound(round: GpuRound): void {
    if (this.closed) return;
    const now = Date.now();
    this.loopRounds++;
    this.everSampled = true;
    this.lastSampleAtMs = now;
    this.gpuCount = round.gpus.length;
    // A loop that has delivered for a while has earned a fresh backoff.
    if (now - this.loopSpawnedAtMs >= Math.max(10 * this.cfg.intervalMs, 10000)) this.attempt = 0;
    this.retryLog.recovered(`nvidia-smi: sampling again (${this.okMessage()})`);
    this.setStatus("ok", this.okMessage());
    this.loopWarnings = [];
    const sample = { atMs: round.atMs, gpus: round.gpus, apps: this.currentApps(now) };
    this.latestUsed = new Map(round.gpus.map((g) => [g.uuid, g.memoryUsedMiB]));
    this.deliver("sample", () => this.onSample(sample));
    // memory moved: ask at once rather than at the next tick (the attribution follows one round later)
    if (this.appsTimer && this.memoryMoved()) {
      clearTimeout(this.appsTimer);
      this.appsTimer = null;
      this.pollApps();
    }
  }

  /** Whether the holders may have changed since the last compute-apps answer. */
  private memoryMoved(): boolean {
    return memoryMoved(this.appsBasis, this.latestUsed);
  }

  /** Poll now? When memory moved, the last answer failed or is older than appsRefreshMs. */
  private appsDue(now: number): boolean {
    if (!this.appsOutcome?.ok) return true;
    if (now - this.appsStartedAtMs >= this.cfg.appsRefreshMs) return true;
    return this.memoryMoved();
  }

  /** A throwing consumer must not take the sampler (or the agent) down from a stream handler. */
  private deliver(what: string, call: () => void): void {
    try {
      call();
    } catch (e) {
      this.log(`nvidia-smi: ${what} consumer threw: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private watchdog(): void {
    if (this.closed) return;
    const now = Date.now();
    const staleAfter = 3 * this.cfg.intervalMs;
    if (this.everSampled && now - this.lastSampleAtMs > staleAfter && this.current.state === "ok") {
      this.setStatus("stale", `no sample from nvidia-smi for ${fmtSec(now - this.lastSampleAtMs)}`);
    }
    if (!this.everSampled && this.loopRounds === 0 && this.current.state === "connecting" && this.loop) {
      if (now - this.loopSpawnedAtMs > staleAfter) {
        this.setStatus(
          "connecting",
          `waiting for the first sample from nvidia-smi (NVML start-up can take many seconds without persistence mode; giving up after ${fmtSec(this.cfg.startupTimeoutMs)})`,
        );
      }
    }
    const child = this.loop;
    if (!child || this.loopKilledByUs) return;
    if (this.loopRounds > 0 && now - this.lastSampleAtMs > staleAfter) {
      this.killLoop(child, `no complete sample for ${fmtSec(now - this.lastSampleAtMs)}`);
    } else if (this.loopRounds === 0 && now - this.loopSpawnedAtMs > this.cfg.startupTimeoutMs) {
      this.killLoop(child, `no sample within ${fmtSec(now - this.loopSpawnedAtMs)} of starting`);
    }
  }

  private killLoop(child: ChildProcess, why: string): void {
    this.loopKilledByUs = true;
    const message = `nvidia-smi hung (${why}); killed pid ${child.pid ?? "?"}, restarting`;
    this.log(message);
    this.setStatus(this.everSampled ? "stale" : "error", message);
    child.kill("SIGKILL");
    // SIGKILL cannot end a process stuck in the driver (D state). Never start a second one
    // beside it: it would hang the same way. Say so, and restart only once it is gone.
    this.killCheckTimer = setTimeout(() => {
      if (this.loop === child) {
        this.setStatus(
          "error",
          `nvidia-smi (pid ${child.pid ?? "?"}) does not exit after SIGKILL: stuck in the NVIDIA driver? Waiting for it before restarting`,
        );
      }
    }, KILL_GRACE_MS);
  }

  private loopExited(message: string): void {
    const fallback = this.loopKilledByUs ? null : fallbackFields(this.fields, this.loopOutputTail);
    if (fallback) {
      const { rejected, older } = fallback;
      this.fields = fallback.fields;
      this.log(`nvidia-smi: this driver does not know "${rejected}"; querying ${older ? `"${older}" instead` : "without it"}`);
      this.spawnLoop();
      return;
    }
    if (this.loopKilledByUs) {
      // The status already says why (stale/hung); keep it.
      this.scheduleRestart();
      return;
    }
    this.retryLog.repeat(`exit:${message}`, message);
    this.loopFailed(message);
  }

  private loopFailed(message: string): void {
    this.setStatus("error", message);
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    if (this.closed || this.restartTimer) return;
    const delay = this.backoffDelay();
    this.attempt = Math.min(this.attempt + 1, 30);
    this.retryLog.repeat(`restart:${this.current.message}`, `nvidia-smi: restarting in ${fmtSec(delay)}`);
    this.restartTimer = setTimeout(() => this.spawnLoop(), delay);
  }

  private backoffDelay(): number {
    return Math.min(this.cfg.backoffMaxMs, this.cfg.backoffBaseMs * 2 ** this.attempt);
  }

  // -------------------------------------------------------------------------------------
  // compute apps: one call per interval, never overlapping, each with its own timeout

  private currentApps(now: number): ComputeApp[] | null {
    const o = this.appsOutcome;
    if (!o || !o.ok) return null;
    return now - o.atMs <= appsMaxAgeMs(this.cfg.intervalMs, this.cfg.appsTimeoutMs, this.cfg.appsRefreshMs) ? o.apps : null;
  }

  private pollApps(): void {
    if (this.closed || this.appsChild) return;
    const startedAt = Date.now();
    this.appsStartedAtMs = startedAt;
    this.appsBasis = new Map(this.latestUsed);
    this.appsCalls++;
    const call = { path: this.cfg.path, env: this.cfg.env, timeoutMs: this.cfg.appsTimeoutMs, startedAt };
    this.appsChild = spawnComputeApps(call, (outcome, from) => {
      if (from && this.appsChild === from) this.appsChild = null;
      this.appsDone(startedAt, outcome);
    });
  }

  private appsDone(startedAt: number, outcome: AppsOutcome): void {
    if (this.closed) return;
    const wasOk = this.appsOutcome?.ok ?? true;
    this.appsOutcome = outcome;
    if (!outcome.ok && wasOk) this.log(`nvidia-smi compute apps: ${outcome.message}`);
    if (this.current.state === "ok") this.setStatus("ok", this.okMessage());
    const elapsed = Date.now() - startedAt;
    // While nvidia-smi is failing anyway (no driver, no binary), poll as slowly as the loop retries.
    const healthy = this.current.state === "ok" || this.current.state === "connecting";
    const period = healthy ? this.cfg.intervalMs : Math.max(this.cfg.intervalMs, this.backoffDelay());
    this.scheduleApps(Math.max(0, period - elapsed));
  }

  /** The next tick: poll if due, else look again one interval later. */
  private scheduleApps(delayMs: number): void {
    this.appsTimer = setTimeout(() => {
      this.appsTimer = null;
      if (this.appsDue(Date.now())) this.pollApps();
      else this.scheduleApps(this.cfg.intervalMs);
    }, delayMs);
  }
}
