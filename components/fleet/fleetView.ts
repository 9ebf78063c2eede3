/**
 * What the fleet overview shows, worked out from the live store (a pure function, so the order
 * and the folding are tested without a browser):
 *
 * - **Needs attention**, first: units that failed, loop (systemd's auto-restart or a crash-loop
 *   report), are stuck starting or stopping, or run without serving (./unitOrder.ts), whichever
 *   host they are on; and hosts that are down or whose exited processes still hold GPU memory.
 * - **Hosts**, one group each: a healthy host (connected, nothing failing, starting or held) is
 *   folded to one line ("gpu-17 · 20 serving"); any other host is open, with why, and comes
 *   first.
 * - With a filter set (text, state or host) the overview is one flat list of the matching units
 *   instead: whoever filters looks for units, not hosts.
 */
import type { HostState, HostSummary, HostUnit } from "@/server/contract/fleet";
import { formatMiB, plural } from "@/server/contract/format";
import { matchesUnitFilter, type UnitFilter } from "./unitFilter";
import { needsAttention, sortUnits, unitGroup } from "./unitOrder";

export interface HostGroup {
  name: string;
  state: HostState;
  summary: HostSummary;
  /** its units, failed and stuck first */
  units: HostUnit[];
  /** nothing to look at */
  healthy: boolean;
  /** shown as `line` until opened: healthy, and not the panel's only host (one host is the whole page) */
  folded: boolean;
  /** "gpu-17 · 20 serving", "gpu-3 · 18 serving · 2 inactive" */
  line: string;
  /** why it is not folded: "down", "2 failed", "1 starting", "12.5 GiB held by exited processes" */
  reasons: string[];
}

export interface HostAttention {
  name: string;
  /** "down", "12.5 GiB held by exited processes" */
  what: string;
}

export interface FleetView {
  /** a filter is set: `matching` is the list to show, the rest is empty */
  filtered: boolean;
  matching: HostUnit[];
  attentionUnits: HostUnit[];
  attentionHosts: HostAttention[];
  /** hosts that are not healthy first (down, then by name), then the healthy ones by name */
  hosts: HostGroup[];
}

export function isFiltering(f: UnitFilter): boolean {
  return f.q.trim() !== "" || f.state !== "all" || f.host !== "";
}

/** Needs someone: failed, stuck, running but not serving for long, or looping (even while up between crashes). */
export function unitNeedsAttention(u: HostUnit, nowMs: number): boolean {
  return needsAttention(u, nowMs) || u.crashLoop != null;
}

/** "20 serving", "18 serving · 2 inactive", "1 running · 1 starting" (what each unit does, for the folded line). */
export function unitDoingList(units: readonly HostUnit[], nowMs: number): string[] {
  const counts = new Map<string, number>();
  for (const u of units) {
    const g = unitGroup(u, nowMs);
    const what =
      g === "active"
        ? u.readiness?.state === "serving"
          ? "serving"
          : "running"
        : g === "changing"
          ? u.activeState === "deactivating"
            ? "stopping"
            : "starting"
          : g;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  const ORDER = ["failed", "stuck", "starting", "stopping", "serving", "running", "inactive"];
  return [...counts.entries()].sort(([a], [b]) => ORDER.indexOf(a) - ORDER.indexOf(b)).map(([what, n]) => `${n} ${what}`);
}

function hostReasons(h: HostSummary, units: readonly HostUnit[], nowMs: number): string[] {
  const reasons: string[] = [];
  if (h.state !== "connected") reasons.push(h.state);
  const attention = units.filter((u) => unitNeedsAttention(u, nowMs));
  if (attention.length > 0) reasons.push(`${plural(attention.length, "unit")} need${attention.length === 1 ? "s" : ""} attention`);
  const changing = units.filter((u) => unitGroup(u, nowMs) === "changing").length;
  if (changing > 0) reasons.push(`${changing} starting or stopping`);
  if (h.gpuTotals.exitedMiB > 0) reasons.push(`${formatMiB(h.gpuTotals.exitedMiB)} held by exited processes`);
  return reasons;
}

const HOST_RANK: Record<HostState, number> = { down: 0, connecting: 1, connected: 2 };

export function fleetView(hosts: readonly HostSummary[], units: readonly HostUnit[], filter: UnitFilter, nowMs: number): FleetView {
  if (isFiltering(filter)) {
    return {
      filtered: true,
      matching: sortUnits(
        units.filter((u) => matchesUnitFilter(u, filter, nowMs)),
        nowMs,
      ),
      attentionUnits: [],
      attentionHosts: [],
      hosts: [],
    };
  }
  const byHost = new Map<string, HostUnit[]>();
  for (const u of units) {
    const list = byHost.get(u.host);
    if (list) list.push(u);
    else byHost.set(u.host, [u]);
  }
  const groups: HostGroup[] = hosts.map((summary) => {
    const own = sortUnits(byHost.get(summary.name) ?? [], nowMs);
    const reasons = hostReasons(summary, own, nowMs);
    const doing = unitDoingList(own, nowMs);
    return {
      name: summary.name,
      state: summary.state,
      summary,
      units: own,
      healthy: reasons.length === 0,
      folded: reasons.length === 0 && hosts.length > 1,
      line: [summary.name, ...(doing.length ? doing : ["no units"])].join(" · "),
      reasons,
    };
  });
  groups.sort((a, b) => Number(a.healthy) - Number(b.healthy) || HOST_RANK[a.state] - HOST_RANK[b.state] || a.name.localeCompare(b.name));

  const attentionHosts: HostAttention[] = [];
  for (const h of [...hosts].sort((a, b) => a.name.localeCompare(b.name))) {
    if (h.state === "down") attentionHosts.push({ name: h.name, what: "down" });
    if (h.gpuTotals.exitedMiB > 0) attentionHosts.push({ name: h.name, what: `${formatMiB(h.gpuTotals.exitedMiB)} held by exited processes` });
  }
  return {
    filtered: false,
    matching: [],
    attentionUnits: sortUnits(
      units.filter((u) => unitNeedsAttention(u, nowMs)),
      nowMs,
    ),
    attentionHosts,
    hosts: groups,
  };
}
