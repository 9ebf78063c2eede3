/**
 * The alert engine, server-side, whether anyone has a page open or not. It reads the fleet's
 * mirror of every host (HostLink: units, GPU sample, connection state), after every agent event
 * that can change a rule's answer and on a tick for duration rules, and brings the open alerts
 * in the database in line: a condition without an open alert opens one, an open alert without
 * its condition is resolved (only where the panel hears from the host: a host that is down keeps
 * its units' alerts as they were). Then it asks agents for diagnoses, groups what is to be told
 * into messages and kicks the deliverer. The fleet's event handler only notes faults and
 * schedules a pass: nothing there awaits the database, an agent or a receiver.
 *
 * Evaluated on change: a pass made by agent events re-evaluates only the hosts whose events
 * could change a rule's answer (the others' answers are kept from their last evaluation), and
 * when the fleet's conditions are the same as at the last pass it touches no table. The tick
 * (and a pending condition's wake-up, a diagnosis done, a group's window ending) re-evaluates
 * every host and reconciles with the database, for what time alone changes (durations,
 * silences ending, GPU memory of exited processes).
 */
import type { AgentEvent } from "../contract/events";
import type { HostLink } from "../panel/fleet/hostLink";
import type { LazyStore } from "../store/lazyStore";
import { openAlert, openAlertRows, pendingDiagnoses, releaseSilenced, resolveAlert, setDiagnosis, type AlertRow } from "./alertStore";
import { batchNotifications } from "./batcher";
import type { ChannelStore } from "./channels";
import { conditionKey, FaultMemory, hostConditions, SinceClock, type Condition } from "./conditions";
import type { AlertsConfig } from "./config";
import type { Deliverer } from "./deliverer";
import { fetchDiagnosis } from "./diagnosis";
import { escalateAlert, escalationDueAt } from "./lifecycle";
import { dbWindows, maintenanceUntil, type MaintenanceWindow } from "./maintenance";
import { escalationChannelIds, regularChannelIds } from "./routing";
import { ruleSetting } from "./rules";
import { activeSilences, isSilenced } from "./silences";

/** What the engine needs of the fleet: the Fleet fits. */
export interface FleetView {
  all(): HostLink[];
  get(name: string): HostLink | undefined;
  onHostEvent(listener: (host: string, event: AgentEvent) => void): () => void;
}

/** Events after which a rule's answer may differ (a GPU sample changes only the exited-memory rule, which the tick covers). */
const RELEVANT = new Set<AgentEvent["kind"]>(["snapshot", "unit", "unit-removed", "transition", "status", "fault", "readiness"]);

const DIAGNOSES_AT_ONCE = 4;

export interface AlertEngineOptions {
  fleet: FleetView;
  store: LazyStore;
  channels: ChannelStore;
  deliverer: Deliverer;
  config: AlertsConfig;
  panelUrl: string;
  log: (msg: string) => void;
  clock?: () => number;
}

export class AlertEngine {
  private readonly since = new SinceClock();
  private readonly faults = new FaultMemory();
  private readonly diagnosing = new Set<number>();
  private readonly clock: () => number;
  private off: (() => void) | null = null;
  private tick: ReturnType<typeof setInterval> | null = null;
  private soon: ReturnType<typeof setTimeout> | null = null;
  private wake: { at: number; timer: ReturnType<typeof setTimeout> } | null = null;
  private running = false;
  private again = false;
  /** the next pass re-evaluates every host and reconciles (not only the hosts in `dirty`) */
  private fullNext = true;
  private dirty = new Set<string>();
  /** each host's last answer: its conditions, the SinceClock keys it asked, the link it was of */
  private readonly answers = new Map<string, { link: HostLink; conditions: Condition[]; keys: string[]; readyAt: number }>();
  /** the condition keys of the last reconcile that reached the database (null: none yet, or it failed) */
  private reconciled: string | null = null;
  private stopped = true;
  private lastError: string | null = null;
  /** escalateTo names that match no enabled channel, logged once each */
  private readonly unknownEscalation = new Set<string>();
  /** resolves when the pass under way (if any) is done; tests and shutdown wait on it */
  private current: Promise<void> = Promise.resolve();

  constructor(private readonly o: AlertEngineOptions) {
    this.clock = o.clock ?? Date.now;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.off = this.o.fleet.onHostEvent((host, event) => this.onEvent(host, event));
    this.tick = setInterval(() => this.schedule(0), this.o.config.tickMs);
    this.tick.unref?.();
    this.o.deliverer.start();
    this.schedule(0);
  }

  stop(): void {
    this.stopped = true;
    this.off?.();
    this.off = null;
    if (this.tick) clearInterval(this.tick);
    if (this.soon) clearTimeout(this.soon);
    if (this.wake) clearTimeout(this.wake.timer);
    this.tick = this.soon = this.wake = null;
    this.o.deliverer.stop();
  }

  /**
   * Run a full pass now and wait for it: after a silence or maintenance window changed (what may
   * be sent changed while no condition did), and in tests. Full, so it also reconciles what the
   * kept answers would skip (time-based escalation, resolutions seen without an event).
   */
  async passNow(): Promise<void> {
    await this.current;
    this.fullNext = true;
    await this.pass();
  }

  private onEvent(host: string, event: AgentEvent): void {
    if (event.kind === "fault") this.faults.record(host, event.fault);
    // a burst of events (a snapshot, 20 units failing) makes one pass, for the hosts that sent them
    if (RELEVANT.has(event.kind)) {
      this.dirty.add(host);
      this.schedule(200, false);
    }
  }

  private schedule(delayMs: number, full = true): void {
    if (this.stopped) return;
    if (full) this.fullNext = true;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.soon) {
      if (delayMs > 0) return;
      clearTimeout(this.soon);
    }
    this.soon = setTimeout(() => {
      this.soon = null;
      this.current = this.pass();
    }, delayMs);
    this.soon.unref?.();
  }

  private async pass(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    const full = this.fullNext;
    this.fullNext = false;
    try {
      // nothing changed since the last pass (agent events that moved no rule's answer): no database work
      if (!(await this.reconcile(full))) return;
      this.startDiagnoses();
      await this.batch();
      if (this.lastError) this.o.log("alerts: the engine works again");
      this.lastError = null;
    } catch (err) {
      this.reconciled = null;
      this.fullNext = true;
      const message = (err as Error).message;
      if (message !== this.lastError) this.o.log(`alerts: a pass failed (retrying on the next tick): ${message}`);
      this.lastError = message;
    } finally {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.schedule(0);
      }
    }
  }

  /** Bring the open alerts in line; false when the conditions are those of the last reconcile and it was not a full pass (nothing done). */
  private async reconcile(full: boolean): Promise<boolean> {
    const now = this.clock();
    const conditions = new Map<string, Condition>();
    let readyAt = Infinity;
    const dirty = this.dirty;
    this.dirty = new Set();
    const links = this.o.fleet.all();
    for (const link of links) {
      const kept = this.answers.get(link.name);
      let answer = kept;
      if (full || !kept || kept.link !== link || dirty.has(link.name) || kept.readyAt <= now) {
        let hostReady = Infinity;
        const opts = { minHoldMs: this.o.config.settleMs, onPending: (at: number) => (hostReady = Math.min(hostReady, at)) };
        const keys: string[] = (this.since.recording = []);
        try {
          answer = { link, conditions: hostConditions(link, now, this.o.config.rules, this.since, this.faults, opts), keys, readyAt: hostReady };
        } finally {
          this.since.recording = null;
        }
        this.answers.set(link.name, answer);
      } else {
        this.since.touch(kept.keys);
      }
      for (const c of answer!.conditions) conditions.set(conditionKey(c), c);
      readyAt = Math.min(readyAt, answer!.readyAt);
    }
    if (this.answers.size > links.length) for (const name of this.answers.keys()) if (!this.o.fleet.get(name)) this.answers.delete(name);
    // a condition that will have held long enough soon: look again then, not at the next tick
    if (readyAt - now < this.o.config.tickMs) this.wakeAt(readyAt + 50);
    this.since.sweep();
    const keys = [...conditions.keys()].sort().join("\n");
    if (!full && keys === this.reconciled) return false;
    const store = await this.o.store.get();
    const open = await openAlertRows(store.db);
    const openKeys = new Map(open.map((a) => [conditionKey(a), a]));
    const dbNow = await store.nowMs();
    const silences = await activeSilences(store.db, dbNow);
    const windows = await this.windows(store, dbNow);
    const inMaintenance = (a: { host: string; unit: string }) => maintenanceUntil(windows, a.host, a.unit, dbNow) !== null;
    for (const [key, c] of conditions) {
      const row = openKeys.get(key);
      if (!row) {
        await openAlert(store, c, { silenced: isSilenced(silences, c), maintenance: inMaintenance(c), diagnose: c.unit !== "" });
      } else if (row.fire_queued === 0 && !isSilenced(silences, row) && !inMaintenance(row)) {
        await releaseSilenced(store, row.id);
      }
    }
    for (const [key, row] of openKeys) {
      if (!conditions.has(key) && this.mayResolve(row, dbNow)) await resolveAlert(store, row.id);
      else if (conditions.has(key)) await this.maybeEscalate(store, row, dbNow);
    }
    this.reconciled = keys;
    return true;
  }

  /** The config file's windows and the database's (maintenance.create). */
  private async windows(store: Awaited<ReturnType<LazyStore["get"]>>, dbNow: number): Promise<MaintenanceWindow[]> {
    return [...this.o.config.maintenance, ...(await dbWindows(store.db, dbNow))];
  }

  /** Unacknowledged for its rule's escalateAfter: sent to escalateTo too, once (whichever replica claims it). */
  private async maybeEscalate(store: Awaited<ReturnType<LazyStore["get"]>>, row: AlertRow, dbNow: number): Promise<void> {
    const setting = ruleSetting(this.o.config.rules, row.rule as Condition["rule"], row.host, row.unit);
    const due = escalationDueAt(row, setting);
    if (due === null) return;
    if (due > dbNow) {
      if (due - dbNow < this.o.config.tickMs) this.wakeAt(this.clock() + (due - dbNow) + 50);
      return;
    }
    const channels = (await this.o.channels.all()).filter((ch) => ch.enabled && setting!.escalateTo.includes(ch.name));
    for (const name of setting!.escalateTo) {
      if (channels.some((ch) => ch.name === name) || this.unknownEscalation.has(name)) continue;
      this.unknownEscalation.add(name);
      this.o.log(`alerts: escalateTo names "${name}", which is no enabled channel; escalations skip it`);
    }
    const done = await escalateAlert(
      store,
      row.id,
      setting!.escalateAfterMs!,
      channels.map((ch) => ch.id),
      this.o.panelUrl,
    );
    if (done?.messageId != null) this.o.deliverer.kick();
  }

  /** An open alert whose condition is not seen: resolved only where the panel can see the host's present state. */
  private mayResolve(row: AlertRow, dbNow: number): boolean {
    const link = this.o.fleet.get(row.host);
    if (!link) return true; // the host was removed from the panel
    if (row.rule === "agent-down") return true;
    if (link.state !== "connected" || link.bootId === null) return false;
    if (row.rule === "gpu-xid") {
      // faults are moments the panel may not have seen (a restart); keep the alert its full time
      const keep = ruleSetting(this.o.config.rules, "gpu-xid", row.host, row.unit)?.afterMs ?? 0;
      return dbNow - row.opened_at >= keep;
    }
    return true;
  }

  private startDiagnoses(): void {
    void (async () => {
      const store = await this.o.store.get();
      for (const row of await pendingDiagnoses(store.db)) {
        if (this.diagnosing.size >= DIAGNOSES_AT_ONCE || this.stopped) return;
        if (this.diagnosing.has(row.id)) continue;
        this.diagnosing.add(row.id);
        void fetchDiagnosis(this.o.fleet.get(row.host), row.unit, this.o.config.diagnosisTimeoutMs)
          .then((result) => setDiagnosis(store.db, row.id, result))
          .catch((err: unknown) => this.o.log(`alerts: cannot store a diagnosis: ${(err as Error).message}`))
          .finally(() => {
            this.diagnosing.delete(row.id);
            this.schedule(0);
          });
      }
    })().catch((err: unknown) => this.o.log(`alerts: cannot read pending diagnoses: ${(err as Error).message}`));
  }

  private async batch(): Promise<void> {
    const store = await this.o.store.get();
    const made = await batchNotifications(store, {
      windowMs: this.o.config.groupWindowMs,
      diagnosisWaitMs: this.o.config.diagnosisTimeoutMs + 1000,
      panelUrl: this.o.panelUrl,
      channelIds: async () => regularChannelIds(await this.o.channels.all(), this.o.config.rules),
      escalatedChannelIds: async (alert) => escalationChannelIds(await this.o.channels.all(), this.o.config.rules, alert),
    });
    if (made > 0) this.o.deliverer.kick();
    // a group still inside its window goes out when the window ends, not at the next tick
    if (await this.hasPending(store)) this.scheduleLater(Math.min(1000, this.o.config.groupWindowMs || 1000));
  }

  private async hasPending(store: Awaited<ReturnType<LazyStore["get"]>>): Promise<boolean> {
    const r = await store.db.selectFrom("alert_notifications").select("id").where("message_id", "is", null).limit(1).executeTakeFirst();
    return r !== undefined;
  }

  private wakeAt(atMs: number): void {
    if (this.stopped || (this.wake && this.wake.at <= atMs)) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(
      () => {
        this.wake = null;
        this.schedule(0);
      },
      Math.max(0, atMs - this.clock()),
    );
    timer.unref?.();
    this.wake = { at: atMs, timer };
  }

  private scheduleLater(ms: number): void {
    if (this.stopped || this.soon) return;
    this.fullNext = true;
    this.soon = setTimeout(() => {
      this.soon = null;
      this.current = this.pass();
    }, ms);
    this.soon.unref?.();
  }
}
