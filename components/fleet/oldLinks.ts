/**
 * Where the single-host panel's links go now: `/units/<name>` to the host that has that unit
 * (a chooser when several have it), `/gpus` to the only host's GPUs (a chooser when there are
 * several). Decided from `units.list` / `hosts.list`, in the browser, with the user's session.
 */
import type { HostState, HostUnit } from "@/server/contract/fleet";
import { hostGpusHref, hostUnitHref } from "./links";

export type LinkTarget =
  | { kind: "go"; href: string }
  /** several hosts: the person picks one */
  | { kind: "choose"; hosts: string[] }
  /** hosts the panel has not reached yet may have it: ask again shortly */
  | { kind: "waiting"; connecting: string[] }
  /** nowhere; `unknown` hosts were never reached, so nobody knows what they run */
  | { kind: "none"; unknown: string[] };

interface HostInfo {
  name: string;
  state: HostState;
  unitCounts: Record<string, number>;
}

/** A host the panel never heard units from: connecting, or down before its first snapshot. */
function neverReached(h: HostInfo): boolean {
  return h.state !== "connected" && Object.keys(h.unitCounts).length === 0;
}

export function unitLinkTarget(name: string, units: readonly HostUnit[], hosts: readonly HostInfo[], stillWaiting: boolean): LinkTarget {
  const having = [...new Set(units.filter((u) => u.name === name).map((u) => u.host))].sort();
  const unknown = hosts.filter(neverReached).map((h) => h.name);
  const connecting = hosts.filter((h) => neverReached(h) && h.state === "connecting").map((h) => h.name);
  // a host still connecting may have it too: wait a moment before choosing for the person
  if (stillWaiting && connecting.length > 0) return { kind: "waiting", connecting };
  if (having.length === 1) return { kind: "go", href: hostUnitHref(having[0]!, name) };
  if (having.length > 1) return { kind: "choose", hosts: having };
  return { kind: "none", unknown };
}

export function gpusLinkTarget(hosts: readonly { name: string }[]): LinkTarget {
  if (hosts.length === 1) return { kind: "go", href: hostGpusHref(hosts[0]!.name) };
  if (hosts.length > 1) return { kind: "choose", hosts: hosts.map((h) => h.name) };
  return { kind: "none", unknown: [] };
}
