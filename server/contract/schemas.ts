/**
 * Input schemas of the procedures the agent and the panel share (all `.strict()`: an unknown
 * key is refused, never ignored). Part of the contract: imports nothing else of the project.
 */
import { z } from "zod";
import { AGENT_TOKEN_MAX_LENGTH, agentTokenProblem } from "./agentToken";
import { hostNameSchema } from "./fleet";
import { unitNameSchema } from "./unitNames";
import { GPU_HISTORY_MAX_POINTS } from "./gpuHistory";

export const reasonSchema = z.string().trim().max(500, "reason is longer than 500 characters").optional();

/** Event ids are short; journal cursors (systemd's "s=…;i=…;b=…;m=…;t=…;x=…") are ~150 characters. */
export const lastEventIdSchema = z.string().max(1000).nullish();

export const unitInput = z.object({ name: unitNameSchema }).strict();

/**
 * GPU-aware start/restart ("when its GPUs are free", ./operations.ts): only for start and restart;
 * timeoutMs bounds the stop and the wait (default: the unit's TimeoutStartSec, capped at 10 min).
 */
export const waitForGpusFields = {
  waitForGpus: z.boolean().optional(),
  timeoutMs: z.number().int().min(1000, "timeoutMs must be at least 1000 (1 s)").max(86_400_000, "timeoutMs must be at most 86400000 (24 h)").optional(),
};

/** start / stop / restart / reset-failed / kill at the agent. */
export const unitActionInput = z.object({ name: unitNameSchema, reason: reasonSchema, ...waitForGpusFields }).strict();

/** The same at the panel, on one of its hosts, which may ask for a confirmation first. */
export const panelUnitActionInput = z
  .object({
    host: hostNameSchema,
    name: unitNameSchema,
    reason: reasonSchema,
    /** The operator saw "X restarted this N s ago" and wants to act anyway. */
    confirmed: z.boolean().optional(),
    ...waitForGpusFields,
  })
  .strict();

/** `points`: the chart's width; with it the reply is bucketed (./gpuHistory.ts) instead of every sample. */
const historyPoints = z.number().int().min(1).max(GPU_HISTORY_MAX_POINTS);

export const timelineInput = z
  .object({
    name: unitNameSchema,
    sinceMs: z.number().int().nonnegative().optional(),
    /** end of the range (epoch ms; default now) */
    untilMs: z.number().int().nonnegative().optional(),
    /** with it, the reply also carries `gpu`: the host's GPU memory history in at most this many buckets */
    points: historyPoints.optional(),
  })
  .strict();

/** units.engineHistory: the engine's load and latency since `sinceMs`, at most `points` rows (./readiness.ts EngineHistoryRow). */
export const engineHistoryInput = z.object({ name: unitNameSchema, sinceMs: z.number().int().nonnegative(), points: historyPoints }).strict();

export const journalInput = z.object({ name: unitNameSchema, lines: z.number().int().min(1).max(2000).default(200) }).strict();

export const followJournalInput = z.object({ name: unitNameSchema, lastEventId: lastEventIdSchema }).strict();

export const gpuHistoryInput = z
  .object({
    sinceMs: z.number().int().nonnegative(),
    uuid: z.string().max(100).optional(),
    untilMs: z.number().int().nonnegative().optional(),
    /** with it, the reply is a GpuHistorySeries of at most this many buckets; without, GpuSample[] (thinned) */
    points: historyPoints.optional(),
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

// --- the panel: the same procedures on one of its hosts ------------------------------------

const onHost = { host: hostNameSchema };

export const hostInput = z.object(onHost).strict();
export const hostUnitInput = unitInput.extend(onHost);
export const hostTimelineInput = timelineInput.extend(onHost);
export const hostJournalInput = journalInput.extend(onHost);
export const hostFollowJournalInput = followJournalInput.extend(onHost);
export const hostGpuHistoryInput = gpuHistoryInput.extend(onHost);
export const hostEngineHistoryInput = engineHistoryInput.extend(onHost);

/** `events.watch` at the panel: what to watch (see WatchScope in ./fleet.ts). */
export const panelWatchInput = z.discriminatedUnion("watch", [
  z.object({ watch: z.literal("fleet"), lastEventId: lastEventIdSchema }).strict(),
  z.object({ watch: z.literal("host"), host: hostNameSchema, lastEventId: lastEventIdSchema }).strict(),
  z.object({ watch: z.literal("unit"), host: hostNameSchema, name: unitNameSchema, lastEventId: lastEventIdSchema }).strict(),
]);

/** An agent's address: http(s) only, no credentials in it (tokens go in their own field). */
export const agentUrlSchema = z
  .string()
  .trim()
  .max(2000)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "url is not a valid URL (e.g. http://10.0.0.5:9300)" });
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") ctx.addIssue({ code: "custom", message: "url must start with http:// or https://" });
    else if (url.username || url.password) ctx.addIssue({ code: "custom", message: "url must not carry a user or password: give the token in its own field" });
    else if (url.search || url.hash) ctx.addIssue({ code: "custom", message: "url must not have a query or #fragment" });
  });

/** A bearer token as an admin pastes it (the agent's token file): at least 32 visible ASCII characters. */
export const agentTokenSchema = z
  .string()
  .max(AGENT_TOKEN_MAX_LENGTH + 1, "token is longer than 1000 characters")
  .transform((t) => t.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, ""))
  .superRefine((token, ctx) => {
    const problem = agentTokenProblem(token);
    if (problem) ctx.addIssue({ code: "custom", message: problem.replace(/^the token/, "token") });
  });

/** https: the CA (PEM text, e.g. the content of ca.pem) and/or the certificate's pinned SHA-256; plain http off loopback: insecureHttp */
const hostTlsFields = {
  caPem: z
    .string()
    .max(65_536, "caPem is longer than 64 KiB")
    .includes("-----BEGIN CERTIFICATE-----", { message: "caPem holds no PEM certificate" })
    .nullable()
    .optional(),
  fingerprint: z.string().max(200).nullable().optional(),
  insecureHttp: z.boolean().optional(),
};

export const addHostInput = z.object({ name: hostNameSchema, url: agentUrlSchema, token: agentTokenSchema, ...hostTlsFields }).strict();

/** Change a host the Hosts page added; a token left out stays as it is (null clears a CA or fingerprint). */
export const updateHostInput = z
  .object({ name: hostNameSchema, url: agentUrlSchema.optional(), token: agentTokenSchema.optional(), ...hostTlsFields })
  .strict();

export const removeHostInput = z.object({ name: hostNameSchema }).strict();
