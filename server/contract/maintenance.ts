/**
 * Planned maintenance windows (`maintenance.create`, `.list`, `.end`; `[[panel.maintenance]]`
 * in the config file): during a window, alerts for its units are recorded but not sent, the
 * status page says "Planned maintenance until …", and uptime may leave the window out. A window
 * is one-off (`startsAt`/`endsAt`: ISO 8601 or epoch ms) or recurring (`cron` + `durationMinutes`
 * + `timeZone`). Names and fields are a contract other tools use: add, never rename. Part of the
 * contract: imports nothing else of the project.
 */
import { z } from "zod";

export interface MaintenanceOccurrence {
  startsAtMs: number;
  endsAtMs: number;
}

export interface MaintenanceWindowView {
  /** a number for windows made with maintenance.create; "config-<n>" for the config file's (read-only) */
  id: number | string;
  name: string;
  /** host:unit patterns ("gpu-a:vllm-*", "gpu-b:*" for a host and its own alerts) */
  units: string[];
  /** one-off windows */
  startsAtMs: number | null;
  endsAtMs: number | null;
  /** recurring windows */
  cron: string | null;
  durationMinutes: number | null;
  timeZone: string | null;
  /** leave the window out of the status page's uptime */
  excludeFromUptime: boolean;
  source: "panel" | "config";
  createdBy: string | null;
  createdAtMs: number | null;
  endedAtMs: number | null;
  endedBy: string | null;
  /** "now": an occurrence holds; "next": one is to come; "past": none will */
  phase: "now" | "next" | "past";
  /** the occurrence that holds now, or else the next one; null when none is to come */
  current: MaintenanceOccurrence | null;
}

const MAX_MS = 8_640_000_000_000_000;

/** ISO 8601 ("2030-01-01T02:00:00Z", with an offset or Z) or epoch milliseconds. */
export const instantSchema = (what: string) =>
  z.union([z.number(), z.string().trim().max(64)]).transform((v, ctx) => {
    const ms = typeof v === "number" ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS || (typeof v === "string" && !/^\d+$/.test(v) && !/(Z|[+-]\d\d:?\d\d)$/i.test(v))) {
      ctx.addIssue({ code: "custom", message: `${what} must be ISO 8601 with a time zone (2030-01-01T02:00:00Z) or epoch milliseconds` });
      return z.NEVER;
    }
    return Math.trunc(ms);
  });

const patternSchema = z
  .string()
  .trim()
  .min(1, "a unit pattern is empty")
  .max(300, "a unit pattern is longer than 300 characters")
  .regex(/^[\x21-\x7e]+$/, 'a unit pattern may only contain visible ASCII characters ("host:unit" globs with * and ?)');

const common = {
  name: z.string().trim().min(1, "name is empty").max(120, "name is longer than 120 characters"),
  units: z.array(patternSchema).min(1, "units needs at least one host:unit pattern").max(100, "at most 100 patterns"),
  excludeFromUptime: z.boolean().optional(),
};

export const createMaintenanceInput = z.union([
  z
    .object({ ...common, startsAt: instantSchema("startsAt"), endsAt: instantSchema("endsAt") })
    .strict()
    .refine((w) => w.endsAt > w.startsAt, { message: "endsAt must be after startsAt", path: ["endsAt"] }),
  z
    .object({
      ...common,
      cron: z.string().trim().min(9, "cron is not a cron expression (5 or 6 fields)").max(120),
      durationMinutes: z
        .number()
        .int()
        .min(1)
        .max(7 * 24 * 60, "durationMinutes is at most 7 days"),
      timeZone: z.string().trim().min(1).max(64).default("UTC"),
    })
    .strict(),
]);
export type CreateMaintenanceInput = z.infer<typeof createMaintenanceInput>;

export const maintenanceIdInput = z.object({ id: z.number().int().positive() }).strict();
