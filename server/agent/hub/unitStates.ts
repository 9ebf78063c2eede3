/**
 * What the agent knows about each unit: its latest summary and its transitions (bounded per
 * unit), kept sorted by systemd's timestamp and de-duplicated (systemd re-sends unchanged
 * states when jobs change). Units with history from an earlier run of the agent are marked, so
 * their first observation can be joined to what was recorded before.
 */
import type { UnitSummary, UnitTransition } from "../../contract/types";

export class UnitStates {
  private readonly summaries = new Map<string, UnitSummary>();
  private readonly transitions = new Map<string, UnitTransition[]>();
  /** units with history from before this start whose first observation is still to come */
  private readonly restored = new Set<string>();

  constructor(
    private readonly perUnit = 5_000,
    /** called for every transition accepted (the history store) */
    private readonly onAccepted: (t: UnitTransition) => void = () => undefined,
  ) {}

  list(): UnitSummary[] {
    return [...this.summaries.values()];
  }

  get(name: string): UnitSummary | undefined {
    return this.summaries.get(name);
  }

  remove(name: string): void {
    this.summaries.delete(name);
  }

  /** History kept by an earlier run, unit → transitions oldest first. */
  restore(history: Map<string, UnitTransition[]>): void {
    for (const [unit, list] of history) {
      this.transitions.set(unit, list);
      this.restored.add(unit);
    }
  }

  /** A summary arrived; the first sight of a unit records its current state since systemd's timestamp. */
  observe(u: UnitSummary): void {
    const known = this.summaries.get(u.name);
    this.summaries.set(u.name, u);
    if (known || this.transitions.has(u.name)) return;
    this.accept({
      unit: u.name,
      atUsec: u.stateChangeUsec,
      from: null,
      to: { activeState: u.activeState, subState: u.subState },
      result: u.result,
      mainPid: u.mainPid,
      controlPid: u.controlPid,
      nRestarts: u.nRestarts,
      inRestartCycle: false,
    });
  }

  /**
   * A transition from the adapter. Returns the transitions accepted, in order: usually it alone;
   * for the first observation of a unit restored from an earlier run, the steps since the last
   * recorded one (`rebuild` asks the adapter to reconstruct them from systemd's timestamps).
   */
  apply(t: UnitTransition, rebuild: (last: UnitTransition) => UnitTransition[] | undefined): UnitTransition[] {
    if (!this.transitions.has(t.unit) && t.from) this.transitions.set(t.unit, []);
    const restored = t.from === null && this.restored.delete(t.unit);
    const steps = restored ? this.stepsSinceRestore(t, rebuild) : [t];
    return steps.filter((s) => this.accept(s));
  }

  timeline(unit: string, sinceUsec = 0): UnitTransition[] {
    const all = this.transitions.get(unit) ?? [];
    const since = all.filter((t) => t.atUsec >= sinceUsec);
    // keep the transition in force at `since` so the first segment can be drawn
    const before = all.filter((t) => t.atUsec < sinceUsec).at(-1);
    return before ? [before, ...since] : since;
  }

  transitionCount(): number {
    let n = 0;
    for (const l of this.transitions.values()) n += l.length;
    return n;
  }

  private stepsSinceRestore(first: UnitTransition, rebuild: (last: UnitTransition) => UnitTransition[] | undefined): UnitTransition[] {
    const last = this.transitions.get(first.unit)?.at(-1);
    if (!last) return [first];
    return rebuild(last) ?? [{ ...first, from: last.to }];
  }

  private accept(t: UnitTransition): boolean {
    let list = this.transitions.get(t.unit);
    if (!list) this.transitions.set(t.unit, (list = []));
    const last = list.at(-1);
    if (last && last.to.activeState === t.to.activeState && last.to.subState === t.to.subState) return false;
    if (last && t.atUsec < last.atUsec) {
      // out-of-order delivery (e.g. replay after a reconnect): keep the list sorted
      const i = list.findIndex((x) => x.atUsec > t.atUsec);
      list.splice(i, 0, t);
    } else list.push(t);
    if (list.length > this.perUnit) list.splice(0, list.length - this.perUnit);
    this.onAccepted(t);
    return true;
  }
}
