/** A host's summary in words, the same on the fleet overview, a host's page and the Hosts page. */
import type { GpuTotals, HostSource, HostSummary } from "@/server/contract/fleet";
import { formatDuration, formatMiB, formatTime, formatUsedOfTotal, plural } from "@/server/contract/format";

/** "connected for 5 min 03 s", "connecting for 3.0 s", "down since 14:03:27 (2 min 05 s)". */
export function hostStateText(s: Pick<HostSummary, "state" | "sinceMs">, nowMs: number): string {
  const forHowLong = formatDuration(nowMs - s.sinceMs);
  if (s.state === "down") return `down since ${formatTime(s.sinceMs, { date: "auto", relativeToMs: nowMs })} (${forHowLong})`;
  return `${s.state} for ${forHowLong}`;
}

// what needs someone first; anything else systemd reports follows in name order
const COUNT_ORDER = ["failed", "activating", "deactivating", "reloading", "active", "inactive", "maintenance"];

/** Units by ActiveState: [["failed", 1], ["active", 3], …], the order people scan for trouble. */
export function unitCountList(counts: Readonly<Record<string, number>>): [string, number][] {
  const rank = (s: string) => (COUNT_ORDER.includes(s) ? COUNT_ORDER.indexOf(s) : COUNT_ORDER.length);
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

export function unitTotal(counts: Readonly<Record<string, number>>): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

/** "8 GPUs · 600 / 640 GiB", "no GPUs reported". */
export function gpuTotalsText(t: GpuTotals): string {
  if (t.gpus === 0) return t.telemetry && t.telemetry !== "ok" ? `GPU telemetry ${t.telemetry}` : "no GPUs reported";
  return `${plural(t.gpus, "GPU")} · ${formatUsedOfTotal(t.usedMiB, t.totalMiB)}`;
}

/** "12.5 GiB held by exited processes", or null when nothing is. */
export function exitedText(t: GpuTotals): string | null {
  return t.exitedMiB > 0 ? `${formatMiB(t.exitedMiB)} held by exited processes` : null;
}

/** "agent 0.1.0 on node-7 (simulated)", or null before the panel ever reached it. */
export function agentText(s: Pick<HostSummary, "agentVersion" | "hostname" | "simulated" | "name">): string | null {
  if (!s.agentVersion && !s.hostname) return null;
  const on = s.hostname && s.hostname !== s.name ? ` on ${s.hostname}` : "";
  return `agent ${s.agentVersion ?? "version unknown"}${on}${s.simulated ? " (simulated)" : ""}`;
}

/** Where the host is configured, for the Hosts page. */
export function hostSourceText(source: HostSource): string {
  if (source === "file") return "from GPUDECK_AGENTS_FILE (read-only here)";
  if (source === "env") return "from GPUDECK_AGENT_URL (read-only here)";
  return "added on this page";
}
