/**
 * Input schemas of the procedures the agent and the panel share (all `.strict()`: an unknown
 * key is refused, never ignored). Part of the contract: imports nothing else of the project.
 */
import { z } from "zod";
import { unitNameSchema } from "./unitNames";

export const reasonSchema = z.string().trim().max(500, "reason is longer than 500 characters").optional();

/** Event ids are short; journal cursors (systemd's "s=…;i=…;b=…;m=…;t=…;x=…") are ~150 characters. */
export const lastEventIdSchema = z.string().max(1000).nullish();

export const unitInput = z.object({ name: unitNameSchema }).strict();

/** start / stop / restart / reset-failed / kill at the agent. */
export const unitActionInput = z.object({ name: unitNameSchema, reason: reasonSchema }).strict();

/** The same at the panel, which may ask for a confirmation first. */
export const panelUnitActionInput = z
  .object({
    name: unitNameSchema,
    reason: reasonSchema,
    /** The operator saw "X restarted this N s ago" and wants to act anyway. */
    confirmed: z.boolean().optional(),
  })
  .strict();

export const timelineInput = z.object({ name: unitNameSchema, sinceMs: z.number().int().nonnegative().optional() }).strict();

export const journalInput = z.object({ name: unitNameSchema, lines: z.number().int().min(1).max(2000).default(200) }).strict();

export const followJournalInput = z.object({ name: unitNameSchema, lastEventId: lastEventIdSchema }).strict();

export const gpuHistoryInput = z
  .object({
    sinceMs: z.number().int().nonnegative(),
    uuid: z.string().max(100).optional(),
  })
  .strict();

export const watchInput = z.object({ lastEventId: lastEventIdSchema }).strict().optional();

export const auditFilterInput = z
  .object({
    user: z.string().trim().min(1).max(128).optional(),
    unit: z.string().trim().min(1).max(300).optional(),
    action: z.string().trim().min(1).max(64).optional(),
    outcome: z.string().trim().min(1).max(64).optional(),
    from: z.number().int().nonnegative().optional(),
    to: z.number().int().nonnegative().optional(),
    /** Keyset paging: rows older than this id (the previous page's `nextCursor`). */
    cursor: z.number().int().positive().nullish(),
    /** Sent by infinite queries; pages only go back in time. */
    direction: z.enum(["forward", "backward"]).optional(),
    limit: z.number().int().min(1).max(500).default(100),
  })
  .strict();
