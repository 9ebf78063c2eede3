/**
 * What each signal from systemd means for the tracked units and their jobs: Manager signals
 * (UnitNew, JobNew, JobRemoved, Reloading, UnitFilesChanged) and PropertiesChanged on units and
 * jobs. Called as a task on the adapter's queue, so in arrival order, and only for signals whose
 * sender is systemd's current bus name.
 */
import type { BusConnection, SignalMessage } from "./bus";
import { num, str, unwrapProps } from "./dbusValues";
import type { JobTracker } from "./jobTracker";
import { JOB_IFACE, JOB_PATH_PREFIX, MANAGER, PROPS_IFACE, SD_PATH } from "./systemdCalls";
import type { UnitTracker } from "./unitTracker";

export async function handleSystemdSignal(conn: BusConnection, m: SignalMessage, units: UnitTracker, jobs: JobTracker): Promise<void> {
  if (m.interface === MANAGER && m.path === SD_PATH) {
    await onManagerSignal(conn, m, units, jobs);
    return;
  }
  if (m.interface === PROPS_IFACE && m.member === "PropertiesChanged") {
    if (await units.propertiesChanged(conn, m)) return;
    if (str(m.body[0]) === JOB_IFACE && m.path.startsWith(JOB_PATH_PREFIX)) jobs.stateChanged(m.path, unwrapProps(m.body[1]));
  }
}

async function onManagerSignal(conn: BusConnection, m: SignalMessage, units: UnitTracker, jobs: JobTracker): Promise<void> {
  switch (m.member) {
    case "UnitNew":
      await units.unitNew(conn, str(m.body[0]), str(m.body[1]));
      return;
    case "UnitRemoved":
      // Only garbage collection unloads a unit; we hold a ref, and a unit whose file is gone
      // disappears from the list at the next Reloading re-read.
      return;
    case "JobNew": {
      const [id, path, unit] = [num(m.body[0]), str(m.body[1]), str(m.body[2])];
      if (!units.has(unit) || jobs.has(id)) return;
      await jobs.announce(conn, id, path, unit, units.get(unit)!.snapshot.subState);
      return;
    }
    case "JobRemoved": {
      const [id, unit, result] = [num(m.body[0]), str(m.body[2]), str(m.body[3])];
      if (!jobs.has(id) && !units.has(unit)) return;
      jobs.finished(id, unit, result);
      return;
    }
    case "Reloading":
      // Reloading(true) when it begins, (false) when done: then everything may have changed
      if (m.body[0] === false) await units.refreshAll(conn, { ref: false });
      return;
    case "UnitFilesChanged":
      await units.refreshAll(conn, { ref: false });
      return;
    default:
      return;
  }
}
