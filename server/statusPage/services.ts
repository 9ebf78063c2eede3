/**
 * The services on the status page and their state in plain words, from the fleet's mirror. A
 * service is a group an admin named ("Kimi K2.5 chat" = gpu-a:vllm-kimi-k25.service), or, with
 * no groups named, every unit of every host under its Description (or name). No command lines,
 * PIDs or host internals: only a state, a word or two on the start phase, and a time.
 */
import { createHash } from "node:crypto";
import type { ServiceState, StatusGroup } from "../contract/statusPage";
import type { HostState } from "../contract/fleet";
import type { UnitSummary } from "../contract/types";

/** What the page reads of a host: a HostLink fits. */
export interface StatusHost {
  name: string;
  state: HostState;
  sinceMs: number;
  bootId: string | null;
  units: ReadonlyMap<string, UnitSummary>;
}

export interface ServiceDef {
  id: string;
  name: string;
  units: { host: string; unit: string }[];
}

export interface UnitStatus {
  state: ServiceState;
  words: string;
  sinceMs: number | null;
}

const opaqueId = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);

export function serviceDefs(groups: readonly StatusGroup[], hosts: readonly StatusHost[]): ServiceDef[] {
  if (groups.length > 0) {
    return groups.map((g) => ({
      id: opaqueId(`group:${g.name}`),
      name: g.name,
      units: g.units.map((hu) => {
        const i = hu.indexOf(":");
        return { host: hu.slice(0, i), unit: hu.slice(i + 1) };
      }),
    }));
  }
  const defs: ServiceDef[] = [];
  const seen = new Map<string, number>();
  for (const h of [...hosts].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const u of [...h.units.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      const base = u.description?.trim() || u.name;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      defs.push({ id: opaqueId(`unit:${h.name}:${u.name}`), name: n === 1 ? base : `${base} (${n})`, units: [{ host: h.name, unit: u.name }] });
    }
  }
  return defs;
}

/** "03:12 UTC" (the page shows it again in the reader's own time zone). */
export function clockUtc(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

const usecToMs = (usec: number): number | null => (usec > 0 ? Math.floor(usec / 1000) : null);

/** The engine's stage in words ("loading weights"), or "loading" when it says more than words (a path, a number). */
export function plainStage(stage: string | null): string {
  return stage && /^[A-Za-z][A-Za-z \-]{0,40}$/.test(stage) ? stage : "loading";
}

const START_WORDS: Record<string, string> = {
  condition: "checking conditions",
  "start-pre": "preparing",
  start: "starting",
  "start-post": "finishing start",
  "auto-restart": "restarting after a failure",
};

/** ", expected back around 14:20 UTC" from the agent's estimate; once that has passed, "taking longer than usual". */
function expectedBack(atMs: number | undefined, nowMs: number): string {
  if (atMs === undefined) return "";
  return atMs > nowMs ? `, expected back around ${clockUtc(atMs)}` : ", taking longer than usual";
}

export function unitStatus(host: StatusHost | undefined, unitName: string, nowMs = Date.now()): UnitStatus {
  if (!host) return { state: "unknown", words: "Status unknown", sinceMs: null };
  if (host.state !== "connected" || host.bootId === null)
    return { state: "unknown", words: `Status unknown since ${clockUtc(host.sinceMs)}`, sinceMs: host.sinceMs };
  const u = host.units.get(unitName);
  if (!u) return { state: "down", words: "Down", sinceMs: null };
  const since = usecToMs(u.stateChangeUsec);
  const r = u.readiness;
  switch (u.activeState) {
    case "active":
    case "reloading":
      if (r?.state === "loading")
        return { state: "starting", words: `Starting — ${plainStage(r.stage)}${expectedBack(r.estimatedReadyAtMs, nowMs)}`, sinceMs: r.sinceMs };
      if (r?.state === "not-serving" || r?.state === "failed") return { state: "degraded", words: "Degraded — not answering", sinceMs: r.sinceMs };
      return { state: "serving", words: "Serving", sinceMs: r?.state === "serving" ? r.sinceMs : since };
    case "activating":
      return {
        state: "starting",
        words: `Starting — ${r?.state === "loading" && r.stage ? plainStage(r.stage) : (START_WORDS[u.subState] ?? "starting")}`,
        sinceMs: since,
      };
    case "deactivating":
      return { state: "down", words: "Stopping", sinceMs: since };
    default:
      return { state: "down", words: since !== null ? `Down since ${clockUtc(since)}` : "Down", sinceMs: since };
  }
}

const RANK: Record<ServiceState, number> = { serving: 0, starting: 1, degraded: 2, unknown: 3, down: 4 };

/** The worst state of several (the page's overall state). */
export function worst(states: readonly ServiceState[]): ServiceState {
  return states.reduce<ServiceState>((w, s) => (RANK[s] > RANK[w] ? s : w), "serving");
}

/** A service of several units: all alike is that state; some serving is degraded ("2 of 3 up"). */
export function combine(parts: readonly UnitStatus[]): UnitStatus {
  if (parts.length === 1) return parts[0]!;
  if (parts.length === 0) return { state: "unknown", words: "Status unknown", sinceMs: null };
  const first = parts[0]!;
  if (parts.every((p) => p.state === first.state)) {
    if (first.state === "down") {
      const since = Math.max(...parts.map((p) => p.sinceMs ?? 0)) || null;
      return { state: "down", words: since ? `Down since ${clockUtc(since)}` : "Down", sinceMs: since };
    }
    return first.state === "serving" ? { state: "serving", words: "Serving", sinceMs: Math.max(...parts.map((p) => p.sinceMs ?? 0)) || null } : first;
  }
  const up = parts.filter((p) => p.state === "serving").length;
  if (up > 0) return { state: "degraded", words: `Degraded — ${up} of ${parts.length} up`, sinceMs: null };
  const starting = parts.find((p) => p.state === "starting");
  if (starting) return starting;
  return parts.find((p) => p.state === "unknown") ?? first;
}
