/**
 * Which unit names the adapter may touch (GPUDECK_UNITS). Checked before anything reaches D-Bus
 * or journalctl, so a bad name never becomes a bus call or a journalctl argument.
 */
import { matchesUnitGlobs, unitNameProblem } from "../../contract/unitNames";

/** Throws for an invalid name or one outside the globs: the guard of get, act and the journal. */
export function assertManageableUnit(name: string, globs: string[]): void {
  if (typeof name !== "string") throw new Error("unit name must be a string");
  const problem = unitNameProblem(name);
  if (problem) throw new Error(`invalid unit name ${JSON.stringify(name.slice(0, 300))}: ${problem}`);
  if (!matchesUnitGlobs(name, globs)) {
    throw new Error(`unit ${name} is not among the units this agent may manage (GPUDECK_UNITS=${globs.join(",") || "<empty>"})`);
  }
}

/** A unit to track and list: a valid name matching the globs, and not a template (`foo@.service`). */
export function isTrackableUnit(name: string, globs: string[]): boolean {
  return unitNameProblem(name) === null && matchesUnitGlobs(name, globs) && !/@\.[a-z]+$/.test(name);
}

/** `foo@bar.service` (an instance of a template), not `foo@.service` (the template) nor `foo.service`. */
export function isUnitInstance(name: string): boolean {
  return /@[^@.][^@]*\.[a-z]+$/.test(name);
}
