/**
 * GPU-aware start/restart ("when its GPUs are free"), one operation at a time per unit:
 *   1. capture the unit's last run (GPUs, PIDs, the memory no process explained) — ./lastRun.ts;
 *   2. refuse at once (step `failed`, `foreign` set, unit untouched) if a live process outside
 *      the unit holds memory on those GPUs;
 *   3. `stopping` (only when the unit is not stopped already): queue the stop job, wait for it;
 *   4. `waiting-for-gpus`: until the last run's memory is released (./gpuWait.ts);
 *   5. `starting`: queue the start job; `started` when it is done, `failed` otherwise.
 * Steps 3–4 are bounded by the timeout (the call's timeoutMs, else the unit's TimeoutStartSec,
 * else — infinite — a 10 min cap): past it the operation ends `timed-out` with the unit left
 * stopped. Cancel works during 3–4 (`canceled`, unit left stopped; a stop job already queued
 * still runs). Once the start job is queued it is systemd's (its own TimeoutStartSec bounds it).
 * Every step is an `operation` event; the stop and start jobs are recorded in the action log as
 * actions of whoever asked, with the operation's id in the reason.
 */
import type { Operation, OperationKind } from "../../contract/operations";
import { formatDurationWords, formatGpus, formatMiBRounded, isInfiniteUsec } from "../../contract/format";
import type { UnitDetail } from "../../contract/types";
import type { Hub } from "../hub/hub";
import type { GpuWaitOptions, GpuWaitStatus } from "./gpuWait";
import { waitForJob } from "./jobWait";
import { captureLastRun, foreignHolders, type LastRun } from "./lastRun";
import { copy, enterStep, OperationStore } from "./operationStore";
import { waitForGpus } from "./waitForGpus";

export const TIMEOUT_CAP_MS = 10 * 60_000;
/** How far back the chart history is searched for the GPUs of a unit that is not on one now. */
const HISTORY_LOOKBACK_MS = 24 * 3600_000;

export interface OperationRequest {
  unit: string;
  kind: OperationKind;
  timeoutMs?: number;
  user: string;
  role: string;
  sourceAddr: string | null;
  reason: string | null;
}

export class OperationError extends Error {
  constructor(
    readonly code: "CONFLICT" | "NOT_FOUND" | "BAD_REQUEST",
    message: string,
    readonly operationId?: string,
  ) {
    super(message);
  }
}

export interface OperationRunnerOptions {
  gpuWait?: GpuWaitOptions;
  keep?: number;
  log?: (m: string) => void;
  clock?: () => number;
}

const STOPPED = new Set(["inactive", "failed"]);

export class OperationRunner {
  readonly store: OperationStore;
  private readonly aborts = new Map<string, AbortController>();
  private count = 0;
  private readonly clock: () => number;

  constructor(
    private readonly hub: Hub,
    private readonly opts: OperationRunnerOptions = {},
  ) {
    this.store = new OperationStore(opts.keep);
    this.clock = opts.clock ?? Date.now;
  }

  get(id: string): Operation | null {
    return this.store.get(id);
  }

  list(unit?: string): Operation[] {
    return this.store.list(unit);
  }

  /** Create and start an operation; resolves with it at once (already `failed` when refused). */
  async begin(req: OperationRequest): Promise<Operation> {
    const busy = this.store.running(req.unit);
    if (busy)
      throw new OperationError(
        "CONFLICT",
        `${req.unit} already has a GPU-aware ${busy.kind} running (operation ${busy.id}, ${busy.step}); cancel it or wait for it.`,
        busy.id,
      );
    const detail = await this.hub.host.systemd.get(req.unit);
    if (!detail) throw new OperationError("NOT_FOUND", `Unit ${req.unit} is not known to systemd on ${this.hub.hostname}.`);
    if (this.store.running(req.unit))
      throw new OperationError("CONFLICT", `${req.unit} already has a GPU-aware operation running.`, this.store.running(req.unit)!.id);
    const now = this.clock();
    const { timeoutMs, source } = resolveTimeout(req.timeoutMs, detail);
    const run = captureLastRun(req.unit, this.hub.gpuNow(), this.hub.gpuHistory.since(now - HISTORY_LOOKBACK_MS));
    const op: Operation = {
      id: `${this.hub.bootId}-o${++this.count}`,
      host: this.hub.hostname,
      unit: req.unit,
      kind: req.kind,
      step: "stopping",
      heldMiB: run.heldMiB,
      pids: [...run.pids],
      message: "",
      atMs: now,
      createdAtMs: now,
      deadlineMs: now + timeoutMs,
      timeoutMs,
      timeoutSource: source,
      user: req.user,
      role: req.role,
      reason: req.reason,
      gpus: run.gpus.map((g) => ({ ...g, heldMiB: 0, pids: [], exitedPids: [], unexplainedMiB: 0 })),
      foreign: [],
      pool: null,
      jobId: null,
      steps: [],
    };
    this.store.add(op);
    const foreign = await this.withStartTimes(foreignHolders(req.unit, run, this.hub.gpuNow()));
    if (foreign.length > 0) {
      op.foreign = foreign;
      this.end(
        op,
        "failed",
        `Not ${req.kind === "restart" ? "restarted" : "started"}: ${foreignSentence(foreign)} on its GPUs; the unit was left as it is. Stop that process (an admin may SIGKILL it), then try again.`,
      );
      return copy(op);
    }
    const abort = new AbortController();
    this.aborts.set(op.id, abort);
    void this.drive(op, detail, run, abort.signal, req.sourceAddr).catch((err: Error) => {
      if (!isFinal(op)) this.end(op, "failed", `Failed: ${err.message}`);
    });
    return copy(op);
  }

  /** Cancel while stopping or waiting; refused once the start job is queued. */
  cancel(id: string, by: string): Operation {
    const op = this.store.record(id);
    if (!op)
      throw new OperationError(
        "NOT_FOUND",
        `There is no operation ${id} on ${this.hub.hostname} (operations are kept in memory: an agent restart forgets them).`,
      );
    if (isFinal(op)) return copy(op);
    if (op.step === "starting")
      throw new OperationError("CONFLICT", `Too late to cancel: the start job ${op.jobId ?? ""} is queued; stop the unit instead.`, op.id);
    this.aborts.get(id)?.abort(by);
    return copy(op);
  }

  /** Agent shutdown: running operations end as failed, saying where they left the unit. */
  close(): void {
    for (const op of this.store.allRunning()) {
      this.aborts.get(op.id)?.abort();
      this.end(op, "failed", `The agent stopped during ${op.step}; the unit was left ${this.stateText(op.unit)}.`);
    }
  }

  private async drive(op: Operation, detail: UnitDetail, run: LastRun, signal: AbortSignal, sourceAddr: string | null): Promise<void> {
    const base = {
      unit: op.unit,
      user: op.user,
      role: op.role,
      sourceAddr,
      reason: `${op.reason ? `${op.reason} — ` : ""}${op.kind} when its GPUs are free (operation ${op.id})`,
    };
    let stoppedAtMs = this.clock();
    if (!STOPPED.has(detail.activeState)) {
      this.step(op, "stopping", { message: `Stopping ${op.unit} (${detail.activeState}/${detail.subState}).` });
      const { jobId } = await this.hub.host.systemd.act(op.unit, "stop").catch((err: Error) => {
        this.hub.recordAction({ ...base, action: "stop" }, { error: err.message });
        throw new Error(`systemd refused the stop: ${err.message}`);
      });
      this.hub.recordAction({ ...base, action: "stop" }, { jobId });
      op.jobId = jobId;
      if (jobId !== null) {
        const end = await waitForJob(this.hub, op.unit, jobId, Math.max(0, op.deadlineMs - this.clock()), signal);
        if (!end.ended) return this.stopped(op, end.why === "timeout" ? "timed-out" : "canceled", `during the stop (job ${jobId} still running)`);
        if (end.job.result !== "done")
          return this.end(op, "failed", `The stop job ended "${end.job.result}"; the unit is ${this.stateText(op.unit)}. Not starting it.`);
      }
      stoppedAtMs = this.clock();
    }
    if (run.gpus.length === 0) {
      this.step(op, "waiting-for-gpus", { heldMiB: 0, pids: [], message: "Nothing of the unit's last run is known to hold GPU memory; nothing to wait for." });
    } else {
      this.step(op, "waiting-for-gpus", { message: `Waiting for the unit's last run to release its memory on ${formatGpus(run.gpus)}.` });
      const outcome = await waitForGpus(this.hub, {
        unit: op.unit,
        run,
        afterMs: stoppedAtMs,
        deadlineMs: op.deadlineMs,
        signal,
        options: this.opts.gpuWait,
        onProgress: (s) => this.progress(op, s),
      });
      if (outcome.status) this.absorb(op, outcome.status);
      switch (outcome.kind) {
        case "foreign":
          op.foreign = await this.withStartTimes(outcome.status.foreign);
          if (op.foreign.length === 0) op.foreign = outcome.status.foreign.map((f) => ({ ...f, startedAtMs: null }));
          return this.end(op, "failed", `Not started: ${foreignSentence(op.foreign)} on its GPUs; the unit was left stopped.`);
        case "started-meanwhile":
          return this.end(op, "failed", `Someone else started ${op.unit} while it waited (now ${outcome.state}); this operation stops here.`);
        case "timeout":
          return this.stopped(
            op,
            "timed-out",
            `while waiting (${outcome.status ? outcome.status.message : `no GPU sample: ${this.hub.telemetryStatus().message}`})`,
          );
        case "aborted":
          return this.stopped(op, "canceled", "while waiting for its GPUs");
        case "free":
          break;
      }
    }
    if (signal.aborted) return this.stopped(op, "canceled", "before the start");
    this.step(op, "starting", { message: `Starting ${op.unit}.` });
    const { jobId } = await this.hub.host.systemd.act(op.unit, "start").catch((err: Error) => {
      this.hub.recordAction({ ...base, action: "start" }, { error: err.message });
      throw new Error(`systemd refused the start: ${err.message}`);
    });
    this.hub.recordAction({ ...base, action: "start" }, { jobId });
    op.jobId = jobId;
    if (jobId === null) return this.end(op, "started", `${op.unit} is ${this.stateText(op.unit)}.`);
    const startBound = isInfiniteUsec(detail.timeoutStartUsec) ? 24 * 3600_000 : detail.timeoutStartUsec / 1000 + 60_000;
    const end = await waitForJob(this.hub, op.unit, jobId, startBound);
    if (!end.ended) return this.end(op, "failed", `The start job ${jobId} did not end within ${formatDurationWords(startBound)}; see the unit.`);
    if (end.job.result === "done")
      return this.end(op, "started", `Started ${op.unit} (job ${jobId} done, ${formatDurationWords(this.clock() - op.createdAtMs)} after it was asked for).`);
    const after = await this.hub.host.systemd.get(op.unit).catch(() => null);
    this.end(
      op,
      "failed",
      `The start job ended "${end.job.result}"; the unit is ${after ? `${after.activeState} (${after.subState}), result ${after.result}` : this.stateText(op.unit)}.`,
    );
  }

  private step(op: Operation, step: Operation["step"], fields: Partial<Pick<Operation, "heldMiB" | "pids" | "message">>): void {
    enterStep(op, step, fields, this.clock());
    this.hub.publish({ kind: "operation", operation: copy(op) });
  }

  private progress(op: Operation, s: GpuWaitStatus): void {
    if (isFinal(op)) return;
    this.absorb(op, s);
    op.atMs = this.clock();
    this.hub.publish({ kind: "operation", operation: copy(op) });
  }

  private absorb(op: Operation, s: GpuWaitStatus): void {
    op.gpus = s.gpus;
    op.heldMiB = s.heldMiB;
    op.pids = s.pids;
    op.pool = s.pool;
    op.message = s.message;
  }

  private stopped(op: Operation, step: "timed-out" | "canceled", when: string): void {
    const what = step === "timed-out" ? `Timed out after ${formatDurationWords(op.timeoutMs)} ${when}` : `Canceled ${when}`;
    const held = op.heldMiB > 0 ? `; ${formatMiBRounded(op.heldMiB)} still held` : "";
    this.end(op, step, `${what}${held}. ${op.unit} was left ${this.stateText(op.unit)} and not started.`);
  }

  private end(op: Operation, step: "started" | "failed" | "timed-out" | "canceled", message: string): void {
    if (isFinal(op)) return;
    this.step(op, step, { message });
    this.aborts.delete(op.id);
    this.store.forgetOld();
  }

  private stateText(unit: string): string {
    const u = this.hub.unit(unit);
    return u ? `${u.activeState} (${u.subState})` : "in an unknown state";
  }

  /** With their start times from /proc; a holder that died since the sample is no longer a live one. */
  private async withStartTimes(list: ReturnType<typeof foreignHolders>): Promise<Operation["foreign"]> {
    const checked = await Promise.all(
      list.map(async (f) => {
        const ins = await this.hub.host.procs.inspect(f.pid).catch(() => null);
        if (ins && (ins.info.state === "gone" || ins.info.state === "zombie")) return null;
        return { ...f, cmdline: f.cmdline.length ? f.cmdline : (ins?.info.cmdline ?? []), startedAtMs: ins?.info.startedAtMs ?? null };
      }),
    );
    return checked.filter((f): f is Operation["foreign"][number] => f !== null);
  }
}

function isFinal(op: Operation): boolean {
  return op.step === "started" || op.step === "failed" || op.step === "timed-out" || op.step === "canceled";
}

/** The call's timeout, else the unit's TimeoutStartSec, else (infinity) the cap. */
export function resolveTimeout(
  callMs: number | undefined,
  unit: Pick<UnitDetail, "timeoutStartUsec">,
): { timeoutMs: number; source: Operation["timeoutSource"] } {
  if (callMs !== undefined) return { timeoutMs: callMs, source: "call" };
  if (isInfiniteUsec(unit.timeoutStartUsec)) return { timeoutMs: TIMEOUT_CAP_MS, source: "cap" };
  return { timeoutMs: Math.round(unit.timeoutStartUsec / 1000), source: "unit" };
}

function foreignSentence(list: Operation["foreign"]): string {
  const parts = list
    .slice(0, 3)
    .map(
      (f) =>
        `PID ${f.pid} (${f.unit ?? "outside any unit"}: ${f.cmdline.join(" ").slice(0, 80) || f.processName}) holds ${f.usedMiB === null ? "memory ([N/A])" : formatMiBRounded(f.usedMiB)} on ${formatGpus([{ uuid: f.gpuUuid, index: f.gpuIndex }])}`,
    );
  return `${parts.join("; ")}${list.length > 3 ? ` and ${list.length - 3} more` : ""}`;
}
