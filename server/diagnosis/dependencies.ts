/**
 * The `dependencies` fact of a diagnosis: the current state of the units a unit requires
 * (Requires=/BindsTo=/Requisite=), so "dependency-failed" can name the failed one.
 *
 *   readDependencyStates(unit, systemd, unitGlobs, limit = MAX_DEPENDENCIES): Promise<DependencyState[] | undefined>
 *
 * Reading is bounded (the first `limit` names systemd lists) and read-only: the adapter reads
 * state even of units outside the allow-list, and each one is marked `manageable` only when it
 * matches the globs, so the diagnosis offers a button only for units the agent may act on.
 * Acting stays guarded where it always was (the router's allow-list, the adapter's own check).
 */
import type { UnitDetail, UnitStateReading } from "../contract/types";
import { matchesUnitGlobs, unitNameProblem } from "../contract/unitNames";
import type { DependencyState } from "./types";

/**
 * What reading needs from systemd: the agent's SystemdAdapter fits as it is. Declared here so the
 * diagnosis depends on nothing of the agent.
 */
export interface UnitStateReader {
  /** Optional, as on the adapter: without it there are no dependency facts. */
  readStates?(names: string[]): Promise<UnitStateReading[]>;
}

/** At most this many required units are read per diagnosis (one bus round trip each). */
export const MAX_DEPENDENCIES = 16;

/**
 * undefined when there is nothing to say: the unit requires nothing, the adapter cannot read
 * states, or reading failed (the diagnosis then stays generic rather than wrong).
 */
export async function readDependencyStates(
  unit: Pick<UnitDetail, "requires">,
  systemd: UnitStateReader,
  unitGlobs: readonly string[],
  limit = MAX_DEPENDENCIES,
): Promise<DependencyState[] | undefined> {
  const names = unit.requires.slice(0, Math.max(0, limit));
  if (names.length === 0 || !systemd.readStates) return undefined;
  let readings;
  try {
    readings = await systemd.readStates(names);
  } catch {
    return undefined;
  }
  // Only the names asked for, in their order, once each: the adapter's answer is not trusted
  // to decide what a diagnosis may point a button at.
  const byName = new Map(readings.map((r) => [r.name, r]));
  const states: DependencyState[] = [];
  for (const name of names) {
    const r = byName.get(name);
    if (!r) continue;
    states.push({
      name,
      loadState: r.loadState,
      activeState: r.activeState,
      subState: r.subState,
      result: r.result,
      manageable: unitNameProblem(name) === null && matchesUnitGlobs(name, unitGlobs),
    });
  }
  return states.length > 0 ? states : undefined;
}
