/**
 * The units the adapter shows: each LoadUnit'ed, Ref'ed (systemd would otherwise garbage-collect
 * inactive ones and stop sending their signals; the refs go away with our connection) and watched
 * with its own PropertiesChanged match rule. Keeps each unit's last properties and what was last
 * reported of it; transitions come from comparing the old snapshot with the new.
 */
import type { UnitSummary, UnitTransition } from "../../contract/types";
import type { SystemdEvent } from "../adapter";
import type { BusConnection, SignalMessage } from "./bus";
import { parseJobRef, str, unwrapProps, type PlainProps } from "./dbusValues";
import { discoverUnits } from "./discovery";
import type { HeldJob, JobTracker } from "./jobTracker";
import { UNIT_IFACE, unitRule, type SystemdCalls } from "./systemdCalls";
import { firstObservation, liveTransition, reconcileTransitions } from "./transitions";
import { isTrackableUnit } from "./unitGuard";
import { snapshotFromProps, summaryFromProps, type UnitSnapshot } from "./unitProps";

export interface TrackedUnit {
  name: string;
  path: string;
  props: PlainProps;
  /** arrival position of the reply `props` was last fully read from */
  propsSeq: number;
  snapshot: UnitSnapshot;
  summary: UnitSummary;
  summaryJson: string;
  /** the connection our PropertiesChanged match rule for this unit lives on */
  matchedOn: BusConnection;
}

export interface UnitTrackerDeps {
  calls: SystemdCalls;
  jobs: JobTracker;
  globs: string[];
  emit: (e: SystemdEvent) => void;
  log: (msg: string) => void;
}

export class UnitTracker {
  private readonly units = new Map<string, TrackedUnit>();
  private readonly unitByPath = new Map<string, string>();
  private refWarned = false;

  constructor(private readonly deps: UnitTrackerDeps) {}

  get(name: string): TrackedUnit | undefined {
    return this.units.get(name);
  }

  has(name: string): boolean {
    return this.units.has(name);
  }

  list(): UnitSummary[] {
    return [...this.units.values()].map((u) => u.summary).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** See SystemdAdapter.transitionsSince: from what an earlier run last saw to the current state. */
  transitionsSince(name: string, last: UnitTransition): UnitTransition[] {
    const unit = this.units.get(name);
    if (!unit) return [];
    // What the earlier run last saw, as a snapshot: only boundaries crossed after it count.
    const prev: UnitSnapshot = {
      ...unit.snapshot,
      activeState: last.to.activeState,
      subState: last.to.subState,
      stateChangeUsec: last.atUsec,
      inactiveExitUsec: 0,
      activeEnterUsec: 0,
      activeExitUsec: 0,
      inactiveEnterUsec: 0,
      nRestarts: last.nRestarts,
      job: null,
    };
    // a unit restarted while the agent was away is back in the same state: the boundaries it
    // crossed in between still show the stop and the start
    return reconcileTransitions(prev, unit.snapshot);
  }

  /**
   * UnitNew: a unit matching the globs that we do not track yet is tracked from now on; not a name
   * with no unit file that someone merely looked up or tried to start (systemd loads it as
   * not-found): tracking it would list a phantom unit for everyone (as discovery, unless the
   * globs name it explicitly).
   */
  async unitNew(conn: BusConnection, name: string, path: string): Promise<void> {
    if (!isTrackableUnit(name, this.deps.globs) || this.units.has(name)) return;
    if (!this.deps.globs.includes(name)) {
      const props = await this.deps.calls.getAll(conn, path, UNIT_IFACE).catch(() => null);
      if (props && str(props.LoadState) === "not-found" && str(props.ActiveState) === "inactive") return;
    }
    await this.track(conn, name, path, true);
  }

  /** PropertiesChanged on a tracked unit's object; false when the path is no tracked unit's. */
  async propertiesChanged(conn: BusConnection, m: SignalMessage): Promise<boolean> {
    const unitName = this.unitByPath.get(m.path);
    if (!unitName) return false;
    const unit = this.units.get(unitName);
    if (!unit || m.seq < unit.propsSeq) return true; // the last full read already includes this
    Object.assign(unit.props, unwrapProps(m.body[1]));
    // systemd sends the type-specific interface (Service …) first, then Unit: evaluate on Unit
    if (str(m.body[0]) === UNIT_IFACE) await this.evaluate(conn, unit, "live");
    return true;
  }

  /** Re-read every unit; report transitions (from timestamps), jobs and removals we missed. */
  async refreshAll(conn: BusConnection, opts: { ref: boolean }): Promise<void> {
    const { calls, jobs, globs, emit } = this.deps;
    const found = await discoverUnits(conn, calls, globs, jobs);
    for (const [name, knownPath] of found) {
      const unit = this.units.get(name);
      if (!unit) {
        await this.track(conn, name, knownPath, true);
        continue;
      }
      if (unit.matchedOn !== conn) {
        // a new connection (bus restarted): match rules and refs died with the old one
        await conn.addMatch(unitRule(unit.path));
        unit.matchedOn = conn;
        await this.ref(conn, unit.path);
      } else if (opts.ref) await this.ref(conn, unit.path);
      await this.readProps(conn, unit);
      await this.evaluate(conn, unit, "reconcile");
    }
    for (const unit of [...this.units.values()]) {
      if (found.has(unit.name)) continue;
      this.units.delete(unit.name);
      this.unitByPath.delete(unit.path);
      await conn.removeMatch(unitRule(unit.path)).catch(() => undefined);
      await calls.call(conn, { path: unit.path, interface: UNIT_IFACE, member: "Unref" }).catch(() => undefined);
      emit({ type: "unit-removed", name: unit.name });
    }
    await jobs.reconcile(conn, this.heldJobs(), (unit) => this.units.get(unit)?.snapshot.subState);
  }

  private heldJobs(): Map<number, HeldJob> {
    const held = new Map<number, HeldJob>();
    for (const unit of this.units.values()) {
      const ref = parseJobRef(unit.props.Job);
      if (ref) held.set(ref.id, { unit: unit.name, path: ref.path });
    }
    return held;
  }

  private async track(conn: BusConnection, name: string, knownPath: string | null, emitFirst: boolean): Promise<void> {
    const { calls, jobs, emit } = this.deps;
    const path = knownPath ?? (await calls.loadUnit(conn, name));
    // Match first, then read: a change in between arrives after the reply and is applied.
    await conn.addMatch(unitRule(path));
    await this.ref(conn, path);
    const { props, seq } = await calls.getAllWithSeq(conn, path);
    await jobs.ensureType(conn, props);
    const snapshot = snapshotFromProps(name, props, jobs.typeOf);
    const summary = summaryFromProps(name, props, jobs.typeOf);
    const unit: TrackedUnit = { name, path, props, propsSeq: seq, snapshot, summary, summaryJson: JSON.stringify(summary), matchedOn: conn };
    this.units.set(name, unit);
    this.unitByPath.set(path, name);
    if (emitFirst) emit({ type: "transition", transition: firstObservation(snapshot) });
    emit({ type: "unit", unit: summary });
  }

  private async ref(conn: BusConnection, path: string): Promise<void> {
    try {
      await this.deps.calls.call(conn, { path, interface: UNIT_IFACE, member: "Ref" });
    } catch (err) {
      if (!this.refWarned) {
        this.refWarned = true;
        this.deps.log(`systemd: cannot Ref units (${(err as Error).message}); inactive units may be unloaded and show their last state`);
      }
    }
  }

  private async readProps(conn: BusConnection, unit: TrackedUnit): Promise<void> {
    const { props, seq } = await this.deps.calls.getAllWithSeq(conn, unit.path);
    unit.props = props;
    unit.propsSeq = seq;
  }

  /** Compare the unit's properties with what we last reported; emit transitions and the summary. */
  private async evaluate(conn: BusConnection, unit: TrackedUnit, mode: "live" | "reconcile"): Promise<void> {
    const { jobs, emit } = this.deps;
    await jobs.ensureType(conn, unit.props);
    const next = snapshotFromProps(unit.name, unit.props, jobs.typeOf);
    const transitions: UnitTransition[] =
      mode === "live" ? [liveTransition(unit.snapshot, next)].filter((t): t is UnitTransition => t !== null) : reconcileTransitions(unit.snapshot, next);
    unit.snapshot = next;
    for (const t of transitions) emit({ type: "transition", transition: t });
    const summary = summaryFromProps(unit.name, unit.props, jobs.typeOf);
    const json = JSON.stringify(summary);
    if (json !== unit.summaryJson) {
      unit.summary = summary;
      unit.summaryJson = json;
      emit({ type: "unit", unit: summary });
    }
  }
}
