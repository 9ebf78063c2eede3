/**
 * Following one unit action (start, stop, restart) on the panel's event stream until the unit
 * reaches what `--wait` asked for: a line for each step (the systemd job, state changes, the
 * engine's load stages, the GPU-aware operation's steps), and a verdict. Pure: fed the unit
 * stream's events in order, it says when it is over; the command does the I/O.
 */
import type { PanelEvent } from "../contract/fleet";
import type { Operation } from "../contract/operations";
import type { Readiness } from "../contract/readiness";
import type { UnitSummary } from "../contract/types";

export type WaitFor = "serving" | "running" | "inactive";
export type UnitVerb = "start" | "stop" | "restart";

export type Verdict = { ok: true; message: string } | { ok: false; message: string } | null;

const FAILED_STEPS = new Set(["failed", "timed-out", "canceled"]);

function readinessLine(r: Readiness): string {
  if (r.state === "loading") return `loading${r.stage ? `: ${r.stage}` : ""}${r.progress ? ` (${r.progress.done}/${r.progress.total})` : ""}`;
  if (r.state === "serving") return `serving${r.models.length ? ` ${r.models.join(", ")}` : ""}`;
  if (r.state === "failed" || r.state === "not-serving") return `${r.state}${r.reason ? `: ${r.reason}` : ""}`;
  return r.state;
}

export class ActionFollower {
  private unit: UnitSummary | null = null;
  private initialServingSince: number | null = null;
  private jobId: number | null | undefined = undefined; // undefined: the action's answer is not in yet
  private operationId: string | null = null;
  private done = false;
  private finishedJobs = new Map<number, string>();
  private lastReadiness = "";
  private lastStep = "";

  constructor(
    readonly name: string,
    readonly verb: UnitVerb,
    readonly wait: WaitFor,
    private readonly print: (line: string) => void,
  ) {}

  /** The unit as the stream's first snapshot had it (before the action). */
  snapshot(unit: UnitSummary | null): void {
    this.unit = unit;
    if (unit?.readiness?.state === "serving") this.initialServingSince = unit.readiness.sinceMs;
    if (unit?.readiness) this.lastReadiness = readinessLine(unit.readiness);
    this.print(`${this.name} is ${unit ? `${unit.activeState} (${unit.subState})` : "not known to the panel yet"}; ${this.verb} sent`);
  }

  /** The action's answer: its systemd job (null: nothing to do), or a GPU-aware operation. */
  sent(answer: { jobId?: number | null; operationId?: string | null }): Verdict {
    if (answer.operationId) {
      this.operationId = answer.operationId;
      this.print(`operation ${answer.operationId}: ${this.verb} when the unit's GPUs are free`);
      this.jobId = null;
    } else {
      this.jobId = answer.jobId ?? null;
      if (this.jobId === null) {
        this.print("nothing to do: systemd queued no job");
        this.done = true;
      } else {
        this.print(`job ${this.jobId} (${this.verb}) queued`);
        const result = this.finishedJobs.get(this.jobId);
        if (result !== undefined) return this.jobFinished(result);
      }
    }
    return this.verdict();
  }

  event(e: PanelEvent): Verdict {
    switch (e.kind) {
      case "host-snapshot": {
        const u = e.units.find((x) => x.name === this.name);
        if (u) this.unit = u;
        break;
      }
      case "unit":
        this.unit = e.unit;
        if (e.unit.readiness) this.readiness(e.unit.readiness);
        break;
      case "readiness":
        if (this.unit) this.unit = { ...this.unit, readiness: e.readiness };
        this.readiness(e.readiness);
        break;
      case "transition": {
        const t = e.transition;
        this.print(
          `${t.from ? `${t.from.activeState} (${t.from.subState}) → ` : ""}${t.to.activeState} (${t.to.subState})${t.result && t.result !== "success" ? `, result ${t.result}` : ""}`,
        );
        break;
      }
      case "job": {
        const j = e.job;
        if (j.phase !== "finished") break;
        this.finishedJobs.set(j.jobId, String(j.result ?? "done"));
        if (this.jobId === j.jobId) return this.jobFinished(String(j.result ?? "done"));
        break;
      }
      case "operation":
        return this.operation(e.operation);
      case "host-removed":
        return { ok: false, message: `the host ${e.host} was removed from the panel` };
      case "unit-removed":
        return { ok: false, message: `the unit ${e.name} is no longer on ${e.host}` };
      default:
        break;
    }
    return this.verdict();
  }

  private readiness(r: Readiness): void {
    const line = readinessLine(r);
    if (line === this.lastReadiness) return;
    this.lastReadiness = line;
    this.print(line);
  }

  private jobFinished(result: string): Verdict {
    this.print(`job ${this.jobId} finished: ${result}`);
    if (result !== "done") return { ok: false, message: `the ${this.verb} job ended with '${result}'` };
    this.done = true;
    return this.verdict();
  }

  private operation(op: Operation): Verdict {
    if (this.operationId === null || op.id !== this.operationId) return this.verdict();
    const line = `${op.step}: ${op.message}`;
    if (line !== this.lastStep) {
      this.lastStep = line;
      this.print(line);
    }
    if (FAILED_STEPS.has(op.step)) return { ok: false, message: `the ${this.verb} ${op.step}: ${op.message}` };
    if (op.step === "started") this.done = true;
    return this.verdict();
  }

  /** Over yet? Only once the action's own job (or operation) is through. */
  verdict(): Verdict {
    const u = this.unit;
    if (!this.done || !u) return null;
    const state = u.activeState;
    if (this.wait === "inactive") {
      if (state === "inactive") return { ok: true, message: `${u.name} is inactive` };
      if (state === "failed") return { ok: false, message: `${u.name} stopped as failed (result ${u.result})` };
      return null;
    }
    if (state === "failed") return { ok: false, message: `${u.name} failed (result ${u.result})` };
    if (state !== "active") return null;
    if (this.wait === "running") return { ok: true, message: `${u.name} is running` };
    const r = u.readiness;
    if (!r || r.engine === null) return { ok: true, message: `${u.name} is running (no inference engine recognised: running is as far as gpudeck can tell)` };
    if (r.state === "failed" && r.sinceMs !== this.initialServingSince) return { ok: false, message: `the engine failed${r.reason ? `: ${r.reason}` : ""}` };
    if (r.state === "serving" && r.sinceMs !== this.initialServingSince)
      return { ok: true, message: `${u.name} is serving${r.models.length ? ` ${r.models.join(", ")}` : ""}` };
    return null;
  }
}
