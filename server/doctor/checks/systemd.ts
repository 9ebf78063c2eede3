/**
 * systemd as the agent will see it: the system bus and systemd's version, the unit globs against
 * the units this host has, and whether this user may start/stop them (root, or a polkit rule such
 * as deploy/polkit/50-gpudeck.rules for the gpudeck user).
 */
import type { CheckResult, Identity, Runner, SystemdProbe } from "../types";

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
  /** every unit matched, for the checks that need one */
  units: string[];
}

export async function checkUnitGlobs(probe: SystemdProbe, globs: readonly string[]): Promise<UnitsOutcome> {
  if (globs.length === 0) {
    return {
      result: [
        {
          id: "units",
          status: "error",
          detail: "no unit globs: the agent will show and control nothing",
          fix: 'set agent.units, e.g. units = ["vllm-*.service"] (GPUDECK_UNITS)',
        },
      ],
      units: [],
    };
  }
  const all: string[] = [];
  const results: CheckResult[] = [];
  for (const glob of globs) {
    let names: string[];
    try {
      names = await probe.unitsMatching([glob]);
    } catch (err) {
      return { result: [{ id: "units", status: "error", detail: `cannot list units: ${(err as Error).message}` }], units: [] };
    }
    all.push(...names);
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
    return {
      result: [
        {
          id: "units",
          status: "error",
          detail: `no unit matches ${globs.map((g) => `"${g}"`).join(", ")}`,
          fix: "fix agent.units (GPUDECK_UNITS): systemctl list-units --all shows the names",
        },
      ],
      units,
    };
  }
  return { result: results, units };
}

/**
 * May this user manage the units? Root may. Anyone else needs polkit to say yes for
 * org.freedesktop.systemd1.manage-units with the unit and verb as details, exactly what systemd
 * asks it on each StartUnit/StopUnit: pkcheck asks the same question without starting anything.
 */
export async function checkUnitControl(runner: Runner, identity: Identity, units: readonly string[]): Promise<CheckResult> {
  if (identity.uid === 0)
    return { id: "unit control", status: "ok", detail: "running as root: systemd lets root manage every unit (the unit globs still limit the agent)" };
  const unit = units[0];
  if (!unit) return { id: "unit control", status: "skip", detail: "no unit to ask about" };
  const denied: string[] = [];
  for (const verb of ["start", "stop", "restart"]) {
    const args = [
      "--action-id",
      "org.freedesktop.systemd1.manage-units",
      "--process",
      String(identity.pid),
      "--detail",
      "unit",
      unit,
      "--detail",
      "verb",
      verb,
    ];
    const r = await runner.run("pkcheck", args, { timeoutMs: 10_000 });
    if (r.spawnError) {
      return {
        id: "unit control",
        status: "warn",
        detail: `cannot ask polkit (pkcheck: ${r.spawnError}); not root, so systemd will ask polkit on every action`,
        fix: "install polkit (apt install polkitd / dnf install polkit) and deploy/polkit/50-gpudeck.rules, or run the agent as root",
      };
    }
    if (r.code !== 0) denied.push(verb);
  }
  if (denied.length > 0) {
    return {
      id: "unit control",
      status: "error",
      detail: `polkit does not let uid ${identity.uid} ${denied.join("/")} ${unit} ("Interactive authentication required" on every action)`,
      fix: "copy deploy/polkit/50-gpudeck.rules to /etc/polkit-1/rules.d/, list the same globs there as agent.units, and run the agent as the user it names; or run the agent as root",
    };
  }
  return { id: "unit control", status: "ok", detail: `polkit lets uid ${identity.uid} start, stop and restart ${unit}` };
}
