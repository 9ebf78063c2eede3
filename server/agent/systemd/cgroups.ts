/**
 * The processes in a unit's cgroup (systemd's ControlGroup property, e.g.
 * "/system.slice/vllm.service"), read from cgroup.procs of the hierarchy systemd tracks
 * units in: cgroup2 at /sys/fs/cgroup (unified), cgroup2 at /sys/fs/cgroup/unified (hybrid),
 * or the named v1 hierarchy /sys/fs/cgroup/systemd (legacy).
 */
import { statfsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";

const CGROUP2_SUPER_MAGIC = 0x63677270;
const CGROUP_SUPER_MAGIC = 0x27e0eb;

function fsType(dir: string): number | null {
  try {
    return statfsSync(dir).type;
  } catch {
    return null;
  }
}

/** Where systemd's own unit cgroups live on this machine, or null if nowhere we know. */
export function detectCgroupRoot(base = "/sys/fs/cgroup"): string | null {
  if (fsType(base) === CGROUP2_SUPER_MAGIC) return base;
  const unified = path.join(base, "unified");
  if (fsType(unified) === CGROUP2_SUPER_MAGIC) return unified;
  const legacy = path.join(base, "systemd");
  if (fsType(legacy) === CGROUP_SUPER_MAGIC) return legacy;
  return null;
}

/** Joins a ControlGroup to the root, refusing anything that could climb out of it. */
export function cgroupDir(root: string, controlGroup: string): string | null {
  if (!controlGroup.startsWith("/") || controlGroup.includes("\0")) return null;
  if (controlGroup.split("/").some((seg) => seg === ".." || seg === ".")) return null;
  return path.join(root, controlGroup);
}

/** PIDs in the cgroup and its sub-cgroups (Delegate=yes units make their own), sorted. */
export async function cgroupPids(root: string, controlGroup: string, limit = 512): Promise<number[]> {
  const top = cgroupDir(root, controlGroup);
  if (!top) return [];
  const pids = new Set<number>();
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (pids.size >= limit || depth > 16) return;
    const text = await readFile(path.join(dir, "cgroup.procs"), "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      const pid = Number(line);
      if (line !== "" && Number.isInteger(pid) && pid > 0 && pids.size < limit) pids.add(pid);
    }
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await walk(path.join(dir, e.name), depth + 1);
  };
  await walk(top, 0);
  return [...pids].sort((a, b) => a - b);
}
