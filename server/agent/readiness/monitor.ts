/**
 * Readiness for every allow-listed unit: which engine it runs (from ExecStart, once per run),
 * whether a run is in progress (from the hub's transitions), the engine's journal lines (one
 * shared reader, ./journalFeed.ts) and its probes (./unitWatch.ts). It puts `readiness` on every
 * unit summary the hub hands out, sends a `readiness` event on each change and keeps the
 * transitions for the timeline (./timeline.ts). Units without a recognised engine stay
 * `unknown` and cost nothing (no probes, not followed).
 */
import type { AgentEvent, StoredEvent } from "../../contract/events";
import { unknownReadiness, type EngineHistoryRow, type EngineMetrics, type Readiness, type ReadinessTransition } from "../../contract/readiness";
import { EngineHistory } from "./engineHistory";
import { quietLog } from "../quietLog";
import type { JournalEntry, UnitStatePair, UnitSummary } from "../../contract/types";
import type { EngineHttp, SystemdAdapter } from "../adapter";
import { readinessSettings, type ReadinessConfig } from "./config";
import { detectEngine, ENGINE_ENV_KEYS } from "./detect";
import { estimateReadyAt, pastStarts, type PastStart } from "./estimate";
import { JournalFeed } from "./journalFeed";
import type { ProbeTiming } from "./probeLoop";
import { probePlan } from "./target";
import { ReadinessTimeline, type ReadinessStore } from "./timeline";
import { UnitWatch } from "./unitWatch";

/** What the monitor needs of the hub (the Hub class has all of it). */
export interface ReadinessHub {
  readonly host: {
    systemd: Pick<SystemdAdapter, "get" | "journal" | "followUnitsJournal" | "readEnvironment">;
    engines?: EngineHttp;
  };
  units(): UnitSummary[];
  subscribe(listener: (e: StoredEvent) => void, opts?: { internal?: boolean }): () => void;
  addUnitFields(fields: (u: UnitSummary) => Partial<UnitSummary> | null): () => void;
  publish(event: AgentEvent): void;
}

export interface ReadinessOptions {
  config: ReadinessConfig;
  store?: ReadinessStore | null;
  log?: (msg: string) => void;
  now?: () => number;
  timing?: ProbeTiming;
  /** journal lines read back for a unit found running at start (its stages so far) */
  backlogLines?: number;
}

/** States in which the engine process runs. */
export function isRunPhase(p: UnitStatePair): boolean {
  if (p.activeState === "active") return p.subState !== "exited";
  if (p.activeState === "reloading") return true;
  return p.activeState === "activating" && (p.subState === "start" || p.subState === "start-post");
}

export class ReadinessMonitor {
  private readonly engineRows: EngineHistory;
  private readonly watches = new Map<string, UnitWatch>();
  /** units whose ExecStart was read (detection is retried for the others) */
  private readonly detected = new Set<string>();
  private readonly timelineStore: ReadinessTimeline;
  private readonly feed: JournalFeed;
  private readonly log: (msg: string) => void;
  private readonly now: () => number;
  private readonly disposers: (() => void)[] = [];
  /** each unit's recorded starts, read again when its timeline changed */
  private readonly starts = new Map<string, { key: string; past: PastStart[] }>();
  private closed = false;

  constructor(
    private readonly hub: ReadinessHub,
    private readonly opts: ReadinessOptions,
  ) {
    this.log = opts.log ?? (() => undefined);
    this.now = opts.now ?? Date.now;
    this.timelineStore = new ReadinessTimeline(opts.store ?? null, this.log);
    const store = opts.store ?? null;
    const quiet = quietLog(this.log);
    this.engineRows = new EngineHistory({
      persist: store?.addEngineRow
        ? (unit, row) => {
            try {
              store.addEngineRow!(unit, row);
              quiet.recovered("readiness: writing engine history works again");
            } catch (err) {
              quiet.repeat("engine-write", `readiness: cannot write engine history to ${store.file}: ${(err as Error).message}`);
            }
          }
        : undefined,
    });
    const follow = hub.host.systemd.followUnitsJournal?.bind(hub.host.systemd);
    this.feed = new JournalFeed(follow, (e) => this.onEntry(e), this.log);
  }

  /** Restore history, find the engines of the units there are, read back what running ones logged, then follow. */
  async start(): Promise<void> {
    this.timelineStore.restore();
    try {
      const rows = this.opts.store?.loadEngineRows?.(this.now() - 24 * 3600_000);
      if (rows) this.engineRows.restore(rows, this.now());
    } catch (err) {
      this.log(`readiness: could not restore engine history: ${(err as Error).message}`);
    }
    this.disposers.push(this.hub.addUnitFields((u) => ({ readiness: this.readiness(u.name) })));
    this.disposers.push(this.hub.subscribe((e) => queueMicrotask(() => this.onEvent(e.event)), { internal: true }));
    const units = this.hub.units();
    let lastCursor: string | null = null;
    for (const u of units) {
      const w = this.watch(u.name);
      w.lastActive = u.activeState;
      const detail = await this.detect(w);
      if (this.closed) return;
      // an event may have moved the unit on meanwhile: it then knows better than this list
      if (!isRunPhase(u) || w.running || w.lastActive !== u.activeState) continue;
      const startedUsec = detail?.execMainStartUsec || u.stateChangeUsec;
      w.begin(startedUsec > 0 ? startedUsec / 1000 : this.now(), false);
      if (w.plan.engine) lastCursor = (await this.backlog(w)) ?? lastCursor;
    }
    this.followEngines(lastCursor);
  }

  close(): void {
    this.closed = true;
    this.feed.close();
    for (const d of this.disposers.splice(0)) d();
    for (const w of this.watches.values()) w.close();
  }

  readiness(name: string): Readiness {
    const w = this.watches.get(name);
    return w ? this.withEstimate(name, w.readiness()) : unknownReadiness(this.now());
  }

  /** The unit's watch (its tracker knows probe failures and whether this run served), if it has one. */
  watchOf(name: string): Pick<UnitWatch, "tracker" | "running" | "plan"> | null {
    return this.watches.get(name) ?? null;
  }

  /** `estimatedReadyAtMs` from the unit's recorded starts (./estimate.ts), while it loads. */
  private withEstimate(name: string, r: Readiness): Readiness {
    if (r.state !== "loading") return r;
    const all = this.timelineStore.since(name, 0);
    const key = `${all.length}|${all.at(-1)?.atMs ?? 0}`;
    let cached = this.starts.get(name);
    if (cached?.key !== key) this.starts.set(name, (cached = { key, past: pastStarts(all) }));
    const at = estimateReadyAt(r, cached.past);
    return at === undefined ? r : { ...r, estimatedReadyAtMs: at };
  }

  engineMetrics(name: string): EngineMetrics | null {
    return this.watches.get(name)?.metrics() ?? null;
  }

  /** units.engineHistory: the engine's load and latency since sinceMs, at most `points` rows. */
  engineHistory(name: string, sinceMs: number, points: number): EngineHistoryRow[] {
    return this.engineRows.query(name, sinceMs, points);
  }

  timeline(name: string, sinceMs = 0): ReadinessTransition[] {
    return this.timelineStore.since(name, sinceMs);
  }

  /** Every unit with an engine, for the agent's /metrics. */
  exports(): { unit: string; readiness: Readiness; metrics: EngineMetrics | null }[] {
    return [...this.watches.values()].filter((w) => w.plan.engine !== null).map((w) => ({ unit: w.name, readiness: w.readiness(), metrics: w.metrics() }));
  }

  followedUnits(): readonly string[] {
    return this.feed.followed();
  }

  private onEvent(e: AgentEvent): void {
    if (this.closed) return;
    switch (e.kind) {
      case "transition":
        this.onState(e.transition.unit, e.transition.to, e.transition.atUsec / 1000, e.transition.from !== null);
        return;
      case "unit":
        // a unit seen for the first time, or a state whose transition was not seen
        if (!this.watches.has(e.unit.name) || this.watches.get(e.unit.name)!.running !== isRunPhase(e.unit)) {
          this.onState(e.unit.name, e.unit, e.unit.stateChangeUsec > 0 ? e.unit.stateChangeUsec / 1000 : this.now(), this.watches.has(e.unit.name));
        } else if (!this.detected.has(e.unit.name)) {
          void this.detect(this.watch(e.unit.name)).then(() => this.followEngines(null)); // systemd was unreachable before
        }
        return;
      case "unit-removed": {
        this.watches.get(e.name)?.close();
        this.watches.delete(e.name);
        this.starts.delete(e.name);
        this.detected.delete(e.name);
        this.followEngines(null);
        return;
      }
      default:
        return;
    }
  }

  private onState(name: string, pair: UnitStatePair, atMs: number, fresh: boolean): void {
    const known = this.watches.has(name);
    const w = this.watch(name);
    const running = isRunPhase(pair);
    if (running && !w.running) {
      w.begin(atMs, fresh);
      // ExecStart may have changed since (daemon-reload): look again for this run
      void this.detect(w).then(() => this.followEngines(null));
    } else if (!running && (w.running || pair.activeState !== w.lastActive)) {
      w.end(atMs, pair.activeState);
    } else if (!known) {
      void this.detect(w).then(() => this.followEngines(null));
    }
    w.lastActive = pair.activeState;
  }

  private watch(name: string): UnitWatch {
    let w = this.watches.get(name);
    if (!w) {
      w = new UnitWatch(name, {
        http: this.hub.host.engines ?? null,
        now: this.now,
        timing: this.opts.timing,
        emit: (unit, readiness) => this.hub.publish({ kind: "readiness", unit, readiness: this.withEstimate(unit, readiness) }),
        record: (t) => this.timelineStore.add(t),
        lastRecorded: (unit) => this.timelineStore.last(unit),
        log: this.log,
        engineRow: (unit, row) => this.engineRows.push(unit, row),
      });
      this.watches.set(name, w);
    }
    return w;
  }

  /** The unit's engine and probe plan, from its ExecStart and the overrides. */
  private async detect(w: UnitWatch) {
    const systemd = this.hub.host.systemd;
    const detail = await systemd.get(w.name).catch(() => null);
    if (!detail || this.closed) return detail;
    this.detected.add(w.name);
    const env = systemd.readEnvironment ? await systemd.readEnvironment(w.name, ENGINE_ENV_KEYS).catch(() => ({})) : {};
    const plan = probePlan(detectEngine(detail.execStart, env), readinessSettings(this.opts.config, w.name));
    if (plan.engine !== w.plan.engine || plan.baseUrl !== w.plan.baseUrl || plan.probeUrl !== w.plan.probeUrl || plan.probes !== w.plan.probes)
      w.configure(plan);
    return detail;
  }

  /** What a unit found running logged since its start, oldest first; returns the newest cursor. */
  private async backlog(w: UnitWatch): Promise<string | null> {
    const lines = await this.hub.host.systemd.journal(w.name, this.opts.backlogLines ?? 500).catch(() => [] as JournalEntry[]);
    for (const e of lines) w.entry(e);
    return lines.at(-1)?.cursor ?? null;
  }

  private followEngines(afterCursor: string | null): void {
    if (this.closed) return;
    const names = [...this.watches.values()].filter((w) => w.plan.engine !== null).map((w) => w.name);
    this.feed.setUnits(names, afterCursor);
  }

  private onEntry(e: JournalEntry): void {
    this.watches.get(e.unit)?.entry(e);
  }
}
