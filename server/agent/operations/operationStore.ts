/**
 * The agent's GPU-aware operations: every one still running, and the last `keep` that ended
 * (in memory; an agent restart forgets them, and one that was running is gone with the agent).
 * Handing one out always hands out a copy: the event ring keeps what it was given.
 */
import { isFinalOperationStep, type Operation, type OperationStep } from "../../contract/operations";

export class OperationStore {
  private readonly ops = new Map<string, Operation>();

  constructor(private readonly keep = 200) {}

  add(op: Operation): void {
    this.ops.set(op.id, op);
    this.forgetOld();
  }

  /** The live record (for the runner only). */
  record(id: string): Operation | undefined {
    return this.ops.get(id);
  }

  get(id: string): Operation | null {
    const op = this.ops.get(id);
    return op ? copy(op) : null;
  }

  /** Newest first. */
  list(unit?: string): Operation[] {
    return [...this.ops.values()]
      .filter((o) => unit === undefined || o.unit === unit)
      .reverse()
      .map(copy);
  }

  running(unit: string): Operation | undefined {
    for (const op of this.ops.values()) if (op.unit === unit && !isFinalOperationStep(op.step)) return op;
    return undefined;
  }

  allRunning(): Operation[] {
    return [...this.ops.values()].filter((o) => !isFinalOperationStep(o.step));
  }

  /** Drop the oldest ended operations beyond `keep`. */
  forgetOld(): void {
    const ended = [...this.ops.values()].filter((o) => isFinalOperationStep(o.step));
    for (const o of ended.slice(0, Math.max(0, ended.length - this.keep))) this.ops.delete(o.id);
  }
}

export function copy(op: Operation): Operation {
  return structuredClone(op);
}

/** Enter a step: the operation's current fields and one more entry in `steps`. */
export function enterStep(op: Operation, step: OperationStep, fields: Partial<Pick<Operation, "heldMiB" | "pids" | "message">>, atMs: number): void {
  op.step = step;
  if (fields.heldMiB !== undefined) op.heldMiB = fields.heldMiB;
  if (fields.pids !== undefined) op.pids = fields.pids;
  if (fields.message !== undefined) op.message = fields.message;
  op.atMs = atMs;
  op.steps.push({ step, atMs, heldMiB: op.heldMiB, pids: [...op.pids], message: op.message });
}
