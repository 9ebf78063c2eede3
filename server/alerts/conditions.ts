/**
 * The rules as pure functions: from what the panel's mirror of a host says now (its units, GPU
 * sample, telemetry status, connection state) to the conditions that hold. Level, not edge:
 * evaluated again every tick and after every event, and compared with the open alerts in the
 * database, so a restarted panel (or a second replica) reaches the same alerts. Duration rules
 * need to know since when a condition holds; `SinceClock` remembers what the host does not say.
 */
import type { AlertRuleId, AlertSeverity } from "../contract/alerts";
import type { GpuFault } from "../contract/faults";
import type { HostState } from "../contract/fleet";
import { formatClock, formatDurationWords, formatMiBRounded, formatState, plural } from "../contract/format";
import type { BackendStatus, GpuSample, UnitSummary } from "../contract/types";
import { ruleSetting, type RuleTable } from "./rules";

/** What the rules read of a host: a HostLink fits. */
export interface HostView {
  name: string;
  state: HostState;
  sinceMs: number;
  error: string | null;
  /** null until the panel has had the agent's snapshot */
  bootId: string | null;
  units: ReadonlyMap<string, UnitSummary>;
  gpu: GpuSample | null;
  telemetry: BackendStatus | null;
}

export interface Condition {
  rule: AlertRuleId;
  host: string;
  /** "" for the host's own alerts */
  unit: string;
  severity: AlertSeverity;
  summary: string;
  sinceMs: number;
}

export const conditionKey = (c: { rule: string; host: string; unit: string }): string => `${c.rule}\u0000${c.host}\u0000${c.unit}`;

/**
 * Since when something holds, for conditions whose start the host does not report as such
 * (ActiveState=activating through several sub-states; not serving through loading and
 * not-serving). The first sighting takes the host's own time when given.
 */
export class SinceClock {
  private readonly since = new Map<string, number>();
  private seen = new Set<string>();

  /** keys asked about while recording (which a host's evaluation used: ./engine.ts keeps them with its answer) */
  recording: string[] | null = null;

  get(key: string, initialMs: number): number {
    this.seen.add(key);
    this.recording?.push(key);
    let at = this.since.get(key);
    if (at === undefined) {
      at = initialMs;
      this.since.set(key, at);
    }
    return at;
  }

  /** Keys a host's earlier evaluation asked about, still current (its answer is reused). */
  touch(keys: readonly string[]): void {
    for (const k of keys) this.seen.add(k);
  }

  /** Forget what was not asked about since the last sweep (the condition ended). */
  sweep(): void {
    for (const key of this.since.keys()) if (!this.seen.has(key)) this.since.delete(key);
    this.seen = new Set();
  }
}

/** Xid faults seen per host and unit ("" when no unit is known): they keep an alert open for the rule's afterMs. */
export class FaultMemory {
  private readonly faults = new Map<string, { host: string; unit: string; first: GpuFault; last: GpuFault }>();

  record(host: string, fault: GpuFault): void {
    if (fault.severity === "info") return;
    const unit = fault.unit ?? "";
    const key = `${host}\u0000${unit}`;
    const seen = this.faults.get(key);
    this.faults.set(key, { host, unit, first: seen?.first ?? fault, last: fault });
  }

  /** Faults of `host` whose last one is within `keepMs` (older ones are forgotten). */
  recent(host: string, nowMs: number, keepMs: (unit: string) => number | null): { unit: string; first: GpuFault; last: GpuFault }[] {
    const out: { unit: string; first: GpuFault; last: GpuFault }[] = [];
    for (const [key, f] of this.faults) {
      if (f.host !== host) continue;
      const keep = keepMs(f.unit);
      if (keep === null || nowMs - f.last.atMs > keep) this.faults.delete(key);
      else out.push(f);
    }
    return out;
  }
}

const usecToMs = (usec: number): number | null => (usec > 0 ? Math.floor(usec / 1000) : null);

export interface ConditionOptions {
  /**
   * Every condition must have held this long, whatever its rule's threshold: a state systemd
   * passes through (failed for a moment inside a Restart= cycle) is not an alert. Default 0.
   */
  minHoldMs?: number;
  /** Told when a condition that holds now will have held long enough (the engine looks again then). */
  onPending?: (readyAtMs: number) => void;
}

/** The conditions holding on one host now. Unit rules only for a host the panel hears from (else the last known state stands). */
export function hostConditions(
  host: HostView,
  nowMs: number,
  rules: RuleTable,
  clock: SinceClock,
  faults: FaultMemory,
  opts: ConditionOptions = {},
): Condition[] {
  const out: Condition[] = [];
  const add = (rule: AlertRuleId, unit: string, sinceMs: number, severity: AlertSeverity, summary: string) => {
    const setting = ruleSetting(rules, rule, host.name, unit);
    if (!setting) return false;
    const hold = Math.max(setting.afterMs, opts.minHoldMs ?? 0);
    if (nowMs - sinceMs < hold) {
      opts.onPending?.(sinceMs + hold);
      return true;
    }
    out.push({ rule, host: host.name, unit, severity, summary, sinceMs: Math.min(sinceMs, nowMs) });
    return true;
  };

  if (host.state !== "connected") {
    add("agent-down", "", host.sinceMs, "critical", `The panel cannot reach the agent of ${host.name}: ${host.error ?? "no answer yet"}.`);
    return out;
  }
  if (host.bootId === null) return out;

  const t = host.telemetry;
  if (t && (t.state === "stale" || t.state === "unreachable" || t.state === "error")) {
    add("gpu-telemetry-stale", "", t.sinceMs, "warning", `GPU telemetry is ${t.state}: ${t.message}`);
  }

  for (const u of host.units.values())
    unitConditions(u, nowMs, (rule, since, severity, summary) => add(rule, u.name, since, severity, summary), clock, host.name);

  exitedMemory(host, (unit, since, summary) => add("gpu-memory-exited", unit, since, "warning", summary));

  for (const f of faults.recent(host.name, nowMs, (unit) => ruleSetting(rules, "gpu-xid", host.name, unit)?.afterMs ?? null)) {
    const gpu = f.last.gpuIndex !== null ? `GPU ${f.last.gpuIndex}` : `the GPU at ${f.last.pci}`;
    const severity: AlertSeverity = f.last.severity === "critical" ? "critical" : "warning";
    const summary = `Xid ${f.last.code} on ${gpu}: ${f.last.title}.${f.last.resetRequired ? " The GPU needs a reset; restarting the unit will not help." : ""}`;
    // a fault is a moment: it holds from the first sighting; afterMs is how long it stays
    out.push({ rule: "gpu-xid", host: host.name, unit: f.unit, severity, summary, sinceMs: Math.min(f.first.atMs, nowMs) });
  }
  return out;
}

/** Adds a condition (if it has held long enough); false when the rule is off for it. */
type AddUnit = (rule: AlertRuleId, sinceMs: number, severity: AlertSeverity, summary: string) => boolean;

function unitConditions(u: UnitSummary, nowMs: number, add: AddUnit, clock: SinceClock, host: string): void {
  const changed = usecToMs(u.stateChangeUsec) ?? nowMs;
  const key = (what: string) => `${what}\u0000${host}\u0000${u.name}`;

  if (u.activeState === "failed") {
    // start-limit-hit is its own rule; where that is off, it is a failure like any other (while it
    // is on but has not held long enough, there is no unit-failed alert meanwhile either)
    const limit =
      u.result === "start-limit-hit" &&
      add("start-limit-hit", changed, "critical", `Start limit hit: systemd stopped restarting ${u.name} (failed, start-limit-hit).`);
    if (!limit) add("unit-failed", changed, "critical", `${u.name} failed (${u.result || "no result"}).${u.selfHeal ? ` ${u.selfHeal.message}` : ""}`);
  }

  if (u.crashLoop) {
    const m = u.crashLoop;
    const since = usecToMs(m.firstAtUsec) ?? changed;
    add("crash-loop", since, "critical", `${u.name} is restarting in a loop: ${plural(m.restarts, "restart")} within ${formatDurationWords(m.windowMs)}.`);
  }

  // auto-restart is a Restart= cycle (the crash-loop rule's), not a start that hangs
  if (u.activeState === "activating" && u.subState !== "auto-restart") {
    const since = clock.get(key("activating"), changed);
    add("stuck-activating", since, "warning", `${u.name} has been ${formatState(u)} for ${formatDurationWords(nowMs - since)}.`);
  }

  const r = u.readiness;
  if (u.activeState === "active" && r && (r.state === "loading" || r.state === "not-serving" || r.state === "failed")) {
    const since = clock.get(key("not-serving"), Math.min(r.sinceMs, nowMs));
    const how =
      r.state === "loading"
        ? `still ${r.stage ?? "loading"}${r.estimatedReadyAtMs !== undefined && r.estimatedReadyAtMs > nowMs ? `, expected to serve around ${formatClock(r.estimatedReadyAtMs)} UTC` : ""}`
        : r.state === "failed"
          ? `its engine failed${r.reason ? `: ${r.reason}` : ""}`
          : `not serving${r.reason ? `: ${r.reason}` : ""}`;
    // what self-heal did about it (agent's UnitSummary.selfHeal), and whether it came back
    const healed = u.selfHeal ? ` ${u.selfHeal.message}` : "";
    add("not-serving", since, "warning", `${u.name} is active but ${how} (for ${formatDurationWords(nowMs - since)}).${healed}`);
  }

  selfHealCondition(u, add);
}

/**
 * The agent's own restart (UnitSummary.selfHeal): an alert from the moment it acts while the
 * unit reloads and while it did not come back; resolved ("it came back") once it serves again.
 * So people hear what was done even when the restart was quicker than the not-serving rule.
 */
function selfHealCondition(u: UnitSummary, add: AddUnit): void {
  const h = u.selfHeal;
  if (!h || h.state === "back" || h.state === "held-back") return;
  const did = `gpudeck restarted ${u.name} by itself after its readiness probe failed (${h.reason}).`;
  add("self-heal", h.atMs, h.state === "not-back" ? "critical" : "warning", `${did} ${h.message}`);
}

function exitedMemory(host: HostView, add: (unit: string, sinceMs: number, summary: string) => boolean): void {
  if (!host.gpu) return;
  const byUnit = new Map<string, { mib: number; since: number; gpus: Set<string> }>();
  for (const g of host.gpu.gpus) {
    for (const h of g.holders) {
      if (h.kind !== "exited") continue;
      const unit = h.unit ?? "";
      const entry = byUnit.get(unit) ?? { mib: 0, since: Infinity, gpus: new Set<string>() };
      entry.mib += h.usedMiB;
      entry.since = Math.min(entry.since, h.exitedAtMs ?? host.gpu.atMs);
      entry.gpus.add(g.index !== null ? String(g.index) : g.uuid.slice(0, 12));
      byUnit.set(unit, entry);
    }
  }
  for (const [unit, e] of byUnit) {
    const who = unit ? `exited processes of ${unit}` : "exited processes";
    const gpus = [...e.gpus];
    add(unit, e.since, `${formatMiBRounded(e.mib)} on GPU ${gpus.join(", ")} still held by ${who}.`);
  }
}
