/**
 * systemd as the agent will see it: the system bus and systemd's version, and the unit globs
 * against the units this host has (./unitControl.ts: whether the agent may manage them).
 */
import type { CheckResult, SystemdProbe } from "../types";

/** gpudeck is tested on systemd 252; the D-Bus calls it uses are older, but not this old. */
export const MIN_SYSTEMD = 245;

export async function checkSystemBus(probe: SystemdProbe): Promise<CheckResult> {
  let version: string;
  try {
    version = await probe.version();
  } catch (err) {
    return {
      id: "system bus",
      status: "error",
      detail: `cannot ask systemd on ${probe.address}: ${(err as Error).message}`,
      fix: "is D-Bus running (systemctl status dbus)? In a container, systemd must be PID 1 and /run/dbus/system_bus_socket mounted",
    };
  }
  const major = Number(/^(\d+)/.exec(version)?.[1]);
  if (!Number.isFinite(major) || major < MIN_SYSTEMD) {
    return {
      id: "system bus",
      status: "warn",
      detail: `systemd ${version} (gpudeck is tested on 252; older than ${MIN_SYSTEMD} is not supported)`,
      fix: "upgrade systemd",
    };
  }
  return { id: "system bus", status: "ok", detail: `systemd ${version} on ${probe.address}` };
}

export interface UnitsOutcome {
  result: CheckResult[];
  /** every unit matched */
  units: string[];
  /** one unit of each glob that matches any, for the checks that ask about units */
  samples: string[];
}

export async function checkUnitGlobs(probe: SystemdProbe, globs: readonly string[]): Promise<UnitsOutcome> {
  const none = (result: CheckResult): UnitsOutcome => ({ result: [result], units: [], samples: [] });
  if (globs.length === 0) {
    return none({
      id: "units",
      status: "error",
      detail: "no unit globs: the agent will show and control nothing",
      fix: 'set agent.units, e.g. units = ["vllm-*.service"] (GPUDECK_UNITS)',
    });
  }
  const all: string[] = [];
  const samples: string[] = [];
  const results: CheckResult[] = [];
  for (const glob of globs) {
    let names: string[];
    try {
      names = await probe.unitsMatching([glob]);
    } catch (err) {
      return none({ id: "units", status: "error", detail: `cannot list units: ${(err as Error).message}` });
    }
    all.push(...names);
    if (names[0] && !samples.includes(names[0])) samples.push(names[0]);
    if (names.length === 0) {
      results.push({
        id: "units",
        status: "warn",
        detail: `"${glob}" matches no unit on this host`,
        fix: `check the name: systemctl list-unit-files '${glob}'; a unit installed later is picked up then`,
      });
    } else {
      const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, … (${names.length})` : "");
      results.push({ id: "units", status: "ok", detail: `"${glob}": ${shown}` });
    }
  }
  const units = [...new Set(all)].sort();
  if (units.length === 0) {
    return none({
      id: "units",
      status: "error",
      detail: `no unit matches ${globs.map((g) => `"${g}"`).join(", ")}`,
      fix: "fix agent.units (GPUDECK_UNITS): systemctl list-units --all shows the names",
    });
  }
  return { result: results, units, samples };
}
