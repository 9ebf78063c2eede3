/**
 * The unit lists' filters, as the URL holds them: `q` (text in the unit's name, description or
 * host), `state` (one of STATE_FILTERS) and, on the fleet overview, `host`. Unknown values fall
 * back to "everything", so an old or hand-edited link still shows a list.
 */
import type { UnitSummary } from "@/server/contract/types";
import { unitGroup } from "./unitOrder";

export const STATE_FILTERS = ["all", "attention", "failed", "changing", "active", "inactive"] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export const STATE_FILTER_LABEL: Record<StateFilter, string> = {
  all: "All states",
  attention: "Needs attention (failed or stuck)",
  failed: "Failed",
  changing: "Starting / stopping",
  active: "Active",
  inactive: "Inactive",
};

export interface UnitFilter {
  q: string;
  state: StateFilter;
  /** "" = every host */
  host: string;
}

export function parseUnitFilter(params: Pick<URLSearchParams, "get">): UnitFilter {
  const state = params.get("state");
  return {
    q: params.get("q") ?? "",
    state: STATE_FILTERS.includes(state as StateFilter) ? (state as StateFilter) : "all",
    host: params.get("host")?.trim() ?? "",
  };
}

/** The URL's query with one filter changed; "all" and "" drop the key (the default). */
export function withFilter(params: Pick<URLSearchParams, "toString">, key: keyof UnitFilter, value: string): URLSearchParams {
  const next = new URLSearchParams(params.toString());
  if (value && value !== "all") next.set(key, value);
  else next.delete(key);
  return next;
}

function matchesState(u: UnitSummary, state: StateFilter, nowMs: number): boolean {
  if (state === "all") return true;
  const group = unitGroup(u, nowMs);
  if (state === "attention") return group === "failed" || group === "stuck";
  // stuck units are starting or stopping too
  if (state === "changing") return group === "changing" || group === "stuck";
  return group === state;
}

export function matchesUnitFilter(u: UnitSummary & { host?: string }, f: UnitFilter, nowMs: number): boolean {
  if (f.host && u.host !== undefined && u.host !== f.host) return false;
  if (!matchesState(u, f.state, nowMs)) return false;
  const q = f.q.trim().toLowerCase();
  if (!q) return true;
  return u.name.toLowerCase().includes(q) || u.description.toLowerCase().includes(q) || (u.host?.toLowerCase().includes(q) ?? false);
}
