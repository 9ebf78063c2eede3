/**
 * Which units to show: the names in GPUDECK_UNITS that are not globs, units systemd has loaded
 * and unit files on disk matching the globs. Read at every full re-read.
 */
import type { BusConnection } from "./bus";
import { num, str } from "./dbusValues";
import type { JobTracker } from "./jobTracker";
import { MANAGER, SD_PATH, type SystemdCalls } from "./systemdCalls";
import { isTrackableUnit } from "./unitGuard";

/** Unit name → its object path when systemd has it loaded, else null. */
export async function discoverUnits(conn: BusConnection, calls: SystemdCalls, globs: string[], jobs: JobTracker): Promise<Map<string, string | null>> {
  const found = new Map<string, string | null>();
  for (const g of globs) if (!/[*?]/.test(g) && isTrackableUnit(g, globs)) found.set(g, null);
  if (globs.length === 0) return found;
  const [loaded] = await calls.call(conn, {
    path: SD_PATH,
    interface: MANAGER,
    member: "ListUnitsByPatterns",
    signature: "asas",
    body: [[], globs],
  });
  for (const row of Array.isArray(loaded) ? loaded : []) {
    if (!Array.isArray(row)) continue;
    // (name, description, load, active, sub, following, path, job id, job type, job path)
    const name = str(row[0]);
    // A unit whose file is gone stays loaded as long as we hold a ref; once inactive it is gone
    // for good (unless named explicitly in the globs, then it is shown as not-found).
    const vanished = str(row[2]) === "not-found" && str(row[3]) === "inactive" && !found.has(name);
    if (isTrackableUnit(name, globs) && !vanished) found.set(name, str(row[6]) || null);
    const jobId = num(row[7]);
    if (jobId > 0 && str(row[8])) jobs.rememberType(jobId, str(row[8]));
  }
  const [files] = await calls.call(conn, {
    path: SD_PATH,
    interface: MANAGER,
    member: "ListUnitFilesByPatterns",
    signature: "asas",
    body: [[], globs],
  });
  for (const row of Array.isArray(files) ? files : []) {
    if (!Array.isArray(row)) continue;
    const name = str(row[0]).split("/").pop() ?? "";
    if (isTrackableUnit(name, globs) && !found.has(name)) found.set(name, null);
  }
  return found;
}
