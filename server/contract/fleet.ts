/**
 * One panel, many GPU hosts: how a host is named, what the panel says about each (`hosts.list`),
 * and the events browsers get from `events.watch`. Every event names its `host` (the name the
 * panel's configuration gives it, e.g. "gpu-a"; the machine's own name is `hostname`). Part of
 * the contract: imports nothing else of the project.
 */
import { z } from "zod";
import type { ActionRecord } from "./events";
import type { BackendStatus, GpuSample, JobEvent, Ms, UnitSummary, UnitTransition } from "./types";
import type { GpuFault } from "./faults";
import type { Operation } from "./operations";
import type { Readiness } from "./readiness";

// --- host names ---------------------------------------------------------------------------

/** DNS-label-like: lower-case letters, digits and '-', 1–63 characters, no '-' at either end. */
export const HOST_NAME_RE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function hostNameProblem(name: string): string | null {
  if (name.length === 0) return "host name is empty";
  if (name.length > 63) return "host name is longer than 63 characters";
  if (!HOST_NAME_RE.test(name)) return "host name may only contain lower-case letters, digits and '-' (not at the start or end), like a DNS label";
  return null;
}

export const hostNameSchema = z
  .string()
  .max(64)
  .superRefine((name, ctx) => {
    const problem = hostNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

// --- what the panel says about a host ----------------------------------------------------

/** connected: the panel's one live stream to the agent is up; connecting: not yet (or again); down: it failed. */
export type HostState = "connected" | "connecting" | "down";

/** Where a host is configured: GPUDECK_AGENTS_FILE / GPUDECK_AGENT_URL (read-only in the UI), or the Hosts page. */
export type HostSource = "file" | "env" | "panel";

export interface GpuTotals {
  gpus: number;
  /** null when no GPU reported a number (e.g. unified-memory GPUs report [N/A]) */
  usedMiB: number | null;
  totalMiB: number | null;
  /** memory still held by processes that already exited */
  exitedMiB: number;
  telemetry: BackendStatus["state"] | null;
}

export interface HostSummary {
  name: string;
  state: HostState;
  /** since when `state` holds */
  sinceMs: Ms;
  /** the last problem with the agent's stream, as a sentence; null while connected */
  error: string | null;
  agentVersion: string | null;
  /** the machine's own name, as its agent reports it */
  hostname: string | null;
  simulated: boolean;
  source: HostSource;
  /** units by ActiveState (active, activating, failed, …), from the last known state */
  unitCounts: Record<string, number>;
  gpuTotals: GpuTotals;
  systemd: BackendStatus["state"] | null;
}

/** A unit with the host it runs on (the fleet's list of all units). */
export interface HostUnit extends UnitSummary {
  host: string;
}

// --- what browsers get from events.watch ------------------------------------------------

export type WatchScope = { watch: "fleet" } | { watch: "host"; host: string } | { watch: "unit"; host: string; name: string };

/** A host's state in one event (host and unit scopes start with it; it follows what the agent said). */
export interface HostSnapshot {
  kind: "host-snapshot";
  host: string;
  summary: HostSummary;
  /** the agent's boot id; null before the panel ever reached it */
  bootId: string | null;
  units: UnitSummary[];
  systemd: BackendStatus | null;
  telemetry: BackendStatus | null;
  gpu: GpuSample | null;
  atMs: Ms;
}

export type PanelEvent =
  /** fleet scope: every host's summary and every unit's state */
  | { kind: "fleet-snapshot"; hosts: HostSummary[]; units: HostUnit[]; atMs: Ms }
  | HostSnapshot
  /** summaries that changed (connection state, unit counts, GPU totals), batched */
  | { kind: "hosts"; hosts: HostSummary[] }
  /** fleet scope: a host's whole unit list anew (after the panel re-read the host) */
  | { kind: "host-units"; host: string; units: UnitSummary[] }
  /** an admin removed the host from the panel */
  | { kind: "host-removed"; host: string }
  | { kind: "unit"; host: string; unit: UnitSummary }
  | { kind: "unit-removed"; host: string; name: string }
  | { kind: "transition"; host: string; transition: UnitTransition }
  | { kind: "job"; host: string; job: JobEvent }
  | { kind: "action"; host: string; action: ActionRecord }
  | { kind: "gpu"; host: string; sample: GpuSample }
  | { kind: "status"; host: string; systemd: BackendStatus; telemetry: BackendStatus }
  /** `operation.host` is the panel's name for the host, like `host` */
  | { kind: "operation"; host: string; operation: Operation }
  | { kind: "fault"; host: string; fault: GpuFault }
  /** also on fleet scope: the overview shows whether units serve */
  | { kind: "readiness"; host: string; unit: string; readiness: Readiness };

/**
 * Ids of host and unit scope events carry the agent's own position: `<host>~<agent boot id>-<seq>`,
 * so a browser resumes across its own reconnects, across the panel's reconnects to the agent, and
 * on any panel replica. Fleet scope ids are the panel's: `fleet~<panel boot id>-<seq>` (a fleet
 * stream that cannot resume gets a fresh fleet snapshot: fleet events are state, nothing is lost).
 */
export function hostEventId(host: string, agentEventId: string): string {
  return `${host}~${agentEventId}`;
}

/** `<host>~<boot>-<seq>` → its parts, or null when it is not a host event id. */
export function parseHostEventId(id: string): { host: string; bootId: string; seq: number } | null {
  const m = /^([a-z0-9-]{1,63})~([0-9a-f]*)-(\d+)$/.exec(id);
  return m ? { host: m[1]!, bootId: m[2]!, seq: Number(m[3]) } : null;
}
