/**
 * Opt-in self-healing: for every unit whose probe settings carry `healAfter`, once a second the
 * rules of ./policy.ts are applied to what the agent knows (systemd's state, the readiness
 * tracker's probe failures, running GPU-aware operations, the crash-loop marker). When they say
 * so, the agent begins a GPU-aware restart itself, an operation like any other (steps streamed,
 * stop and start in the action log and the timeline), as `gpudeck (self-heal)` with the probe
 * failures as its reason, and follows it until the engine serves again or did not come back.
 * `UnitSummary.selfHeal` says what it did (for an hour after) or why it held back.
 */
import { formatClock, formatDurationWords } from "../../contract/format";
import { SELF_HEAL_USER, type SelfHealMarker } from "../../contract/selfHeal";
import type { UnitSummary } from "../../contract/types";
import type { CrashLoopMonitor } from "../crashLoop/monitor";
import type { OperationRunner } from "../operations/runner";
import { readinessSettings, type ReadinessConfig } from "../readiness/config";
import type { ReadinessMonitor } from "../readiness/monitor";
import { probeWords } from "../readiness/tracker";
import { decideHeal, HEAL_WINDOW_MS, HealLimiter } from "./policy";

export interface SelfHealHub {
  units(): UnitSummary[];
  unit(name: string): UnitSummary | undefined;
  addUnitFields(fields: (u: UnitSummary) => Partial<UnitSummary> | null): () => void;
  refreshUnit(name: string): void;
}

export interface SelfHealOptions {
  config: ReadinessConfig;
  now?: () => number;
  tickMs?: number;
  log?: (msg: string) => void;
}

const TICK_MS = 1000;
/** A restart it follows this long without an outcome is let go (the marker says what it saw last). */
const FOLLOW_MS = HEAL_WINDOW_MS;

interface Heal {
  operationId: string;
  atMs: number;
  reason: string;
}

/** Whether any unit pattern in the config asks for self-healing. */
export function selfHealConfigured(config: ReadinessConfig): boolean {
  return config.units.some((u) => u.settings.healAfterMs !== undefined);
}

export class SelfHealer {
  private readonly limiter = new HealLimiter();
  private readonly markers = new Map<string, SelfHealMarker>();
  private readonly heals = new Map<string, Heal>();
  private readonly disposeFields: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly log: (msg: string) => void;
  private closed = false;

  constructor(
    private readonly hub: SelfHealHub,
    private readonly readiness: Pick<ReadinessMonitor, "readiness" | "watchOf">,
    private readonly operations: Pick<OperationRunner, "begin" | "get" | "list">,
    private readonly crashLoops: Pick<CrashLoopMonitor, "marker">,
    private readonly opts: SelfHealOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.log = opts.log ?? (() => undefined);
    this.disposeFields = hub.addUnitFields((u) => (this.markers.has(u.name) ? { selfHeal: this.markers.get(u.name)! } : null));
    this.timer = setInterval(() => this.tick(), opts.tickMs ?? TICK_MS);
    this.timer.unref?.();
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.disposeFields();
  }

  marker(unit: string): SelfHealMarker | null {
    return this.markers.get(unit) ?? null;
  }

  /** One look at every unit with healAfter (also called by tests). */
  tick(): void {
    if (this.closed) return;
    const now = this.now();
    for (const u of this.hub.units()) {
      const s = readinessSettings(this.opts.config, u.name);
      if (s?.healAfterMs === undefined) continue;
      const settings = { healAfterMs: s.healAfterMs, healMax: s.healMax ?? 2 };
      if (this.heals.has(u.name)) this.follow(u, now, settings.healMax);
      else this.consider(u, now, settings);
      this.expire(u.name, now);
    }
  }

  private consider(u: UnitSummary, now: number, settings: { healAfterMs: number; healMax: number }): void {
    const w = this.readiness.watchOf(u.name);
    if (!w || !w.running) return;
    const r = this.readiness.readiness(u.name);
    const running = this.operations.list(u.name).find((o) => !["started", "failed", "timed-out", "canceled"].includes(o.step));
    const failing = w.tracker.probeFailures();
    const decision = decideHeal(
      {
        nowMs: now,
        activeState: u.activeState,
        subState: u.subState,
        jobRunning: u.job !== null,
        readinessState: r.state,
        servedInRun: w.tracker.servedInRun(),
        failing,
        operation: running ? { id: running.id, user: running.user, step: running.step } : null,
        crashLoop: this.crashLoops.marker(u.name) !== null,
      },
      settings,
      this.limiter.recent(u.name, now).length,
    );
    const inLastHour = this.limiter.recent(u.name, now).length;
    if (decision.kind === "wait") {
      // a unit that serves again needs no word on why it was not restarted
      if (r.state === "serving" && this.markers.get(u.name)?.state === "held-back") this.setMarker(u.name, null);
      return;
    }
    const reason = `its readiness probe failed for ${formatDurationWords(now - failing!.sinceMs)} (${failing!.count} in a row since ${formatClock(failing!.sinceMs)} UTC${r.probe ? `, last: ${probeWords(r.probe)}` : ""})`;
    if (decision.kind === "held-back") {
      const before = this.markers.get(u.name);
      if (before?.state !== "held-back" || before.message !== decision.message) this.log(`self-heal: ${u.name}: ${decision.message}`);
      this.setMarker(u.name, {
        state: "held-back",
        atMs: before?.state === "held-back" ? before.atMs : now,
        reason,
        operationId: null,
        message: decision.message,
        inLastHour,
        max: settings.healMax,
      });
      return;
    }
    void this.heal(u.name, now, reason, settings.healMax);
  }

  private async heal(unit: string, now: number, reason: string, max: number): Promise<void> {
    this.limiter.record(unit, now);
    const inLastHour = this.limiter.recent(unit, now).length;
    const base = { atMs: now, reason, inLastHour, max };
    this.heals.set(unit, { operationId: "", atMs: now, reason }); // no second one while begin() runs
    this.log(`self-heal: restarting ${unit} (GPU-aware): ${reason}`);
    try {
      const op = await this.operations.begin({ unit, kind: "restart", user: SELF_HEAL_USER, role: "admin", sourceAddr: null, reason: `self-heal: ${reason}` });
      this.heals.set(unit, { operationId: op.id, atMs: now, reason });
      this.setMarker(unit, {
        ...base,
        state: "restarting",
        operationId: op.id,
        message: `gpudeck is restarting it by itself (self-heal, since ${formatClock(now)} UTC): ${op.message || op.step}`,
      });
      const u = this.hub.unit(unit);
      if (u) this.follow(u, this.now(), max);
    } catch (err) {
      this.heals.delete(unit);
      const message = `gpudeck tried to restart it by itself at ${formatClock(now)} UTC (self-heal), but could not: ${(err as Error).message}`;
      this.log(`self-heal: ${unit}: ${message}`);
      this.setMarker(unit, { ...base, state: "not-back", operationId: null, message });
    }
  }

  /** Where the restart it began has got to. */
  private follow(u: UnitSummary, now: number, max: number): void {
    const heal = this.heals.get(u.name)!;
    if (heal.operationId === "") return; // begin() still runs
    const op = this.operations.get(heal.operationId);
    const base = { atMs: heal.atMs, reason: heal.reason, operationId: heal.operationId, inLastHour: this.limiter.recent(u.name, now).length, max };
    const at = formatClock(heal.atMs);
    const done = (marker: SelfHealMarker) => {
      this.heals.delete(u.name);
      this.log(`self-heal: ${u.name}: ${marker.message}`);
      this.setMarker(u.name, marker);
    };
    if (!op)
      return done({
        ...base,
        state: "not-back",
        message: `gpudeck restarted it by itself at ${at} UTC (self-heal); the operation is no longer known to the agent.`,
      });
    if (op.step === "failed" || op.step === "timed-out" || op.step === "canceled") {
      return done({
        ...base,
        state: "not-back",
        message: `gpudeck tried to restart it by itself at ${at} UTC (self-heal); the restart ${op.step === "failed" ? "failed" : op.step}: ${op.message}`,
      });
    }
    if (op.step !== "started") {
      this.setMarker(u.name, {
        ...base,
        state: "restarting",
        message: `gpudeck is restarting it by itself (self-heal, since ${at} UTC): ${op.message || op.step}`,
      });
      return;
    }
    const r = this.readiness.readiness(u.name);
    const w = this.readiness.watchOf(u.name);
    if (r.state === "serving" && w?.tracker.servedInRun()) {
      return done({
        ...base,
        state: "back",
        message: `gpudeck restarted it by itself at ${at} UTC (self-heal); it serves again since ${formatClock(r.sinceMs)} UTC.`,
      });
    }
    if (u.activeState === "failed" || u.activeState === "inactive" || r.state === "failed") {
      const why = r.state === "failed" && r.reason ? r.reason : `${u.activeState} (${u.result || u.subState})`;
      return done({ ...base, state: "not-back", message: `gpudeck restarted it by itself at ${at} UTC (self-heal); it did not come back: ${why}.` });
    }
    if (now - heal.atMs > FOLLOW_MS) {
      return done({
        ...base,
        state: "not-back",
        message: `gpudeck restarted it by itself at ${at} UTC (self-heal); it has not served in the ${formatDurationWords(FOLLOW_MS)} since.`,
      });
    }
    const eta = r.estimatedReadyAtMs !== undefined && r.estimatedReadyAtMs > now ? `, expected to serve around ${formatClock(r.estimatedReadyAtMs)} UTC` : "";
    const what = r.state === "loading" ? `${r.stage ?? "loading"}${eta}` : "not serving yet"; // no progress: a marker change is a unit event
    this.setMarker(u.name, { ...base, state: "loading", message: `gpudeck restarted it by itself at ${at} UTC (self-heal); it is starting again (${what}).` });
  }

  /** A marker is shown for an hour after the restart it tells of. */
  private expire(unit: string, now: number): void {
    const m = this.markers.get(unit);
    if (m && !this.heals.has(unit) && now - m.atMs > HEAL_WINDOW_MS) this.setMarker(unit, null);
  }

  private setMarker(unit: string, marker: SelfHealMarker | null): void {
    const before = this.markers.get(unit);
    if (marker === null) {
      if (!before) return;
      this.markers.delete(unit);
    } else {
      if (before && JSON.stringify(before) === JSON.stringify(marker)) return;
      this.markers.set(unit, marker);
    }
    this.hub.refreshUnit(unit);
  }
}
