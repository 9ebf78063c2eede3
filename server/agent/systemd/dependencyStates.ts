/**
 * The state of units an allowed unit depends on, inside or outside the globs (so a diagnosis can
 * name a failed dependency). Read-only by design: GetUnit (never LoadUnit, so nothing is loaded
 * that systemd had not loaded) and GetAll, and only four properties come out; act(), get() and
 * the journal still refuse these names.
 */
import type { UnitStateReading } from "../../contract/types";
import { unitNameProblem } from "../../contract/unitNames";
import type { BusConnection } from "./bus";
import type { SystemdCalls } from "./systemdCalls";
import { stateReadingFromProps } from "./unitProps";
import type { UnitTracker } from "./unitTracker";

/** readStates() reads at most this many units per call: each is one bus round trip. */
export const MAX_STATE_READS = 64;

/**
 * In the order of `names`; invalid names and units that could not be read are left out.
 * `conn` null (systemd unreachable): what we last read of tracked units, nothing for the others.
 */
export async function readDependencyStates(
  names: string[],
  conn: BusConnection | null,
  calls: SystemdCalls,
  units: UnitTracker,
  log: (msg: string) => void,
): Promise<UnitStateReading[]> {
  const valid = names.filter((name) => typeof name === "string" && unitNameProblem(name) === null).slice(0, MAX_STATE_READS);
  const readings = await Promise.all(
    valid.map(async (name): Promise<UnitStateReading | null> => {
      if (!conn) {
        const props = units.get(name)?.props;
        return props ? stateReadingFromProps(name, props) : null;
      }
      try {
        const path = units.get(name)?.path ?? (await calls.unitPathIfLoaded(conn, name));
        if (path === null) return { name, loadState: "not-found", activeState: "inactive", subState: "dead", result: "" };
        return stateReadingFromProps(name, await calls.getAll(conn, path));
      } catch (err) {
        log(`systemd: reading the state of ${name} failed: ${(err as Error).message}`);
        return null;
      }
    }),
  );
  return readings.filter((r): r is UnitStateReading => r !== null);
}
