/**
 * The audit log of GPU-aware starts/restarts, from the fleet's agent streams (like job results,
 * ./auditSettler.ts): the request's own row (action "restart"/"start", written by the units
 * router) gets `detail: "GPU-aware restart: operation <id>"` and, when the operation ends, its
 * outcome — started → "done", timed-out → "timeout", canceled → "canceled", failed → "refused"
 * when it refused before stopping anything (a foreign process on the unit's GPUs), else "failed".
 * Every step the operation enters gets a row of its own: the same action, outcome = the step
 * name, detail `operation <id> step <step>: <message>`, user = who asked. Progress within a step
 * is not audited. Each step is written once for every panel replica together (each sees the same
 * agent event: the first to claim the step's key in `audit_once` writes it) and events replayed
 * after a reconnect are recognised.
 */
import type { AuditStore } from "../../auth/audit";
import { isFinalOperationStep, type Operation } from "../../contract/operations";

const KEEP = 5000;

export function operationOutcome(op: Operation): string {
  switch (op.step) {
    case "started":
      return "done";
    case "timed-out":
      return "timeout";
    case "canceled":
      return "canceled";
    case "failed":
      return op.foreign.length > 0 && !op.steps.some((s) => s.step === "stopping") ? "refused" : "failed";
    default:
      return "pending";
  }
}

export class OperationAudit {
  /** host + operation id → the request's audit row */
  private readonly requests = new Map<string, number>();
  /** host + operation id + step index, already written */
  private readonly written = new Set<string>();

  constructor(private readonly audit: AuditStore) {}

  /** The units router wrote the request's row and got the operation back. */
  async track(host: string, op: Operation, auditId: number): Promise<void> {
    this.remember(this.requests, `${host}\u0000${op.id}`, auditId);
    await this.audit.updateAuditOutcome(auditId, operationOutcome(op), { detail: `GPU-aware ${op.kind}: operation ${op.id}` });
    await this.handle(host, op);
  }

  /** An `operation` event (any step or progress) of `host`. */
  async handle(host: string, op: Operation): Promise<void> {
    for (const [i, s] of op.steps.entries()) {
      const key = `${host}\u0000${op.id}\u0000${i}`;
      if (this.written.has(key)) continue;
      this.remember(this.written, key);
      await this.audit.recordAuditOnce(`operation-step/${host}/${op.id}/${i}`, {
        at: s.atMs,
        user: op.user,
        role: op.role,
        sourceAddr: null,
        host,
        unit: op.unit,
        action: op.kind,
        reason: op.reason,
        outcome: s.step,
        detail: `operation ${op.id} step ${s.step}: ${s.message}`,
      });
    }
    if (isFinalOperationStep(op.step)) await this.settleRequest(host, op);
  }

  private async settleRequest(host: string, op: Operation): Promise<void> {
    const id = this.requests.get(`${host}\u0000${op.id}`) ?? (await this.findRequest(host, op));
    if (id !== null)
      await this.audit.updateAuditOutcome(id, operationOutcome(op), { detail: `GPU-aware ${op.kind}: operation ${op.id}: ${op.message}`.slice(0, 4000) });
  }

  /** After a panel restart (or on a replica that did not take the request) the map is empty: the pending row whose detail names the operation. */
  private async findRequest(host: string, op: Operation): Promise<number | null> {
    const rows = await this.audit.queryAudit({ host, unit: op.unit, action: op.kind, outcome: "pending", limit: 100 });
    return rows.find((r) => r.detail?.includes(`operation ${op.id}`))?.id ?? null;
  }

  private remember<K>(store: Map<K, number> | Set<K>, key: K, value?: number): void {
    if (store instanceof Map) store.set(key, value!);
    else store.add(key);
    if (store.size > KEEP) store.delete(store.keys().next().value as K);
  }
}
