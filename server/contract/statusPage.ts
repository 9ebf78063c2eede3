/**
 * The status page for stakeholders (`/status`): what it shows (`StatusDocument`, also at
 * `/api/status` as JSON and `/api/status/events` as SSE) and how admins set it up
 * (`statusPage.get`, `statusPage.update`, `statusPage.rotateToken`). Nothing here may carry a
 * command line, a PID, journal text or a host's internals. Part of the contract: imports
 * nothing else of the project.
 */
import { z } from "zod";

/** serving: up (and answering, where readiness is known); starting; degraded: up but not serving, or part of a group down; down; unknown: no news from the host. */
export type ServiceState = "serving" | "starting" | "degraded" | "down" | "unknown";

export interface StatusIncident {
  startMs: number;
  /** null while it lasts */
  endMs: number | null;
  /** one plain line, no command lines or PIDs */
  cause: string;
}

export interface StatusUptime {
  /** fraction 0..1 of the observed time the service was up; null when nothing is known of that span */
  "24h": number | null;
  "7d": number | null;
  "30d": number | null;
}

export interface StatusService {
  /** stable, opaque (not the unit name) */
  id: string;
  name: string;
  state: ServiceState;
  /** in plain words: "Serving", "Starting — loading weights", "Down since 03:12 UTC", "Degraded" */
  words: string;
  /** since when `state` holds, when known (the page shows it in the reader's time zone) */
  sinceMs: number | null;
  /** the host names, only when the admin allows host internals */
  hosts?: string[];
  uptime: StatusUptime;
  /** the last 30 days, newest first, at most 10 */
  incidents: StatusIncident[];
  /** a planned maintenance window covers it now, until then (epoch ms); `words` says "Planned maintenance until …" */
  maintenanceUntilMs?: number;
  /** someone acknowledged its open alert (`words` ends "— Investigating"); cleared when the alert resolves */
  investigating?: boolean;
}

export interface StatusDocument {
  generatedAtMs: number;
  /** the worst of the services */
  overall: ServiceState;
  services: StatusService[];
}

/** A service an admin names: units as "host:unit" ("gpu-a:vllm-kimi-k25.service"). */
export interface StatusGroup {
  name: string;
  units: string[];
}

export interface StatusPageSettings {
  enabled: boolean;
  public: boolean;
  /** show host names on the page */
  showHosts: boolean;
  groups: StatusGroup[];
  /** a token is set (by rotateToken or GPUDECK_STATUS_TOKEN); its last characters */
  tokenHint: string | null;
  /** GPUDECK_STATUS_TOKEN is set: the page is on with that token whatever is stored */
  fromEnvironment: boolean;
  /** the page's address without the token */
  url: string;
  updatedAtMs: number | null;
  updatedBy: string | null;
}

const groupUnit = z
  .string()
  .trim()
  .max(330)
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?:[A-Za-z0-9:_.\\@-]+$/, 'a unit is "host:unit", e.g. "gpu-a:vllm-kimi-k25.service"');

export const statusGroupSchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1, "group name is empty")
      .max(80, "group name is longer than 80 characters")
      .regex(/^[^\x00-\x1f\x7f<>]+$/, "group name must not contain control characters or < >"),
    units: z.array(groupUnit).min(1, "a group needs at least one unit").max(50),
  })
  .strict();

export const updateStatusPageInput = z
  .object({
    enabled: z.boolean().optional(),
    public: z.boolean().optional(),
    showHosts: z.boolean().optional(),
    groups: z.array(statusGroupSchema).max(100).optional(),
  })
  .strict();
export type UpdateStatusPageInput = z.infer<typeof updateStatusPageInput>;
