/**
 * Alerts: the rules, the channels they are sent to, silences, and the JSON a generic webhook
 * receives (`AlertWebhookPayload`, schema "gpudeck.alert.v1"). Rule ids, channel types,
 * procedure inputs and payload keys are a contract other tools use: add, never rename. Part of
 * the contract: imports nothing else of the project.
 */
import { z } from "zod";
import type { DiagnosisSeverity, Evidence } from "./diagnosis";

// --- rules ---------------------------------------------------------------------------------

export const ALERT_RULES = [
  "unit-failed",
  "start-limit-hit",
  "stuck-activating",
  "not-serving",
  "crash-loop",
  "gpu-memory-exited",
  "agent-down",
  "gpu-telemetry-stale",
  "gpu-xid",
  // the agent restarted a unit by itself (opt-in self-heal): open while it reloads or did not come back
  "self-heal",
] as const;
export type AlertRuleId = (typeof ALERT_RULES)[number];

/** Rules about a host as a whole (their alerts have no unit). */
export const HOST_RULES: readonly AlertRuleId[] = ["agent-down", "gpu-telemetry-stale"];

export type AlertState = "firing" | "resolved";
export type AlertSeverity = Exclude<DiagnosisSeverity, "ok">;

export const alertRuleSchema = z.enum(ALERT_RULES);

// --- what the Alerts page shows ----------------------------------------------------------

export interface AlertDiagnosis {
  headline: string;
  severity: DiagnosisSeverity;
  code: string;
  /** the next step as a sentence; null when the diagnosis has none */
  nextStep: string | null;
  evidence: Evidence[];
  /** log text quoted in its sentences (as Diagnosis.journalQuotes) */
  journalQuotes?: string[];
}

export interface AlertView {
  id: number;
  rule: AlertRuleId;
  host: string;
  /** null for host rules (agent-down, gpu-telemetry-stale) and GPU faults of no known unit */
  unit: string | null;
  severity: AlertSeverity;
  /** one line: what holds, e.g. "failed (exit-code)", "activating (start-pre) for 12 min" */
  summary: string;
  /** when the condition began (systemd's timestamp where there is one) */
  sinceMs: number;
  openedAtMs: number;
  resolvedAtMs: number | null;
  diagnosis: AlertDiagnosis | null;
  /** why there is no diagnosis (the agent did not answer …); null when there is one or none applies */
  diagnosisUnavailable: string | null;
  /** a silence matched when it opened (nothing was sent) */
  silenced: boolean;
  // (issue 23; always set by the panel, optional for views made before it)
  /** who acknowledged it ("I'm on it"), when (epoch ms) and their note; null until then */
  acknowledgedBy?: string | null;
  acknowledgedAt?: number | null;
  ackNote?: string | null;
  /** when it was sent to its rule's escalateTo channels, unacknowledged (epoch ms); null: not escalated */
  escalatedAt?: number | null;
  /** it opened during a planned maintenance window: recorded, not sent */
  inMaintenance?: boolean;
}

// --- channels ------------------------------------------------------------------------------

export const CHANNEL_TYPES = ["webhook", "slack", "ntfy", "email"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
/** A channel's kind: those admins add, and "push" (the browsers people subscribed, server/push/; from the config, read-only). */
export type ChannelKind = ChannelType | "push";

/** A channel as admins see it: secrets never come back, a hint at most. */
export interface ChannelView {
  id: string;
  type: ChannelKind;
  name: string;
  enabled: boolean;
  /** "panel": added on the Alerts page; "env": GPUDECK_ALERT_WEBHOOK_URL / GPUDECK_ALERT_CHANNELS (read-only here) */
  source: "panel" | "env";
  /** "https://hooks.slack.com/…k3Yz": the URL's origin and its last characters */
  urlHint: string;
  /** ntfy: an access token is set (…abcd) */
  tokenHint: string | null;
  /** email */
  from: string | null;
  to: string[];
  username: string | null;
  passwordSet: boolean;
  createdAtMs: number;
  createdBy: string | null;
  /** the last delivery attempt, for the channel list */
  lastDelivery: { atMs: number; ok: boolean; error: string | null } | null;
  /** a rule names it in escalateTo: it hears only escalations and what follows them, not every alert */
  escalationOnly?: boolean;
}

export interface DeliveryView {
  id: number;
  channelId: string;
  messageId: number;
  /** the message's title, e.g. "host gpu-b: 6 units failed" */
  title: string;
  kind: "alert" | "test";
  status: "pending" | "sent" | "failed";
  attempts: number;
  createdAtMs: number;
  lastAttemptAtMs: number | null;
  nextAttemptAtMs: number | null;
  sentAtMs: number | null;
  lastError: string | null;
}

export interface SilenceView {
  id: number;
  /** globs: "gpu-a", "*" */
  host: string;
  /** null: the whole host */
  unit: string | null;
  /** null: every rule */
  rule: AlertRuleId | null;
  reason: string;
  createdBy: string;
  createdAtMs: number;
  endsAtMs: number;
  endedAtMs: number | null;
  endedBy: string | null;
  active: boolean;
}

// --- the generic webhook's JSON --------------------------------------------------------------

/** One alert in a message. */
export interface AlertWebhookItem {
  alertId: number;
  host: string;
  unit: string | null;
  rule: AlertRuleId;
  state: AlertState;
  severity: AlertSeverity;
  summary: string;
  /** ISO 8601: when the condition began */
  since: string;
  /** ISO 8601; null while firing */
  resolvedAt: string | null;
  diagnosis: AlertDiagnosis | null;
  diagnosisUnavailable: string | null;
  /** the unit's page (the host's page for host rules) */
  link: string;
  /**
   * present once someone acknowledged the alert: who, when (ISO 8601) and their note; on a start
   * told after it was acknowledged (inside the grouping window) this is how the channels hear it
   */
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  ackNote?: string | null;
}

/**
 * What a generic webhook receives (POST, application/json). A message is one alert, or several
 * of one host and rule that began or ended within the grouping window ("host gpu-b: 6 units
 * failed"): then `unit` and `diagnosis` are null and `alerts` has each. `id` is stable across
 * retries (a receiver may drop one it has seen).
 */
export interface AlertWebhookPayload extends AlertWebhookItem {
  schema: "gpudeck.alert.v1";
  id: string;
  /**
   * "test": the Alerts page's "send test" button; "acknowledged": someone said they are on it
   * (`acknowledgedBy`, `ackNote`); "escalation": it was not acknowledged in its rule's
   * `escalateAfter` and goes to `escalateTo` too
   */
  kind: "alert" | "test" | "acknowledged" | "escalation";
  /** on "acknowledged" messages, and on a one-alert start acknowledged before it was sent */
  acknowledgedBy?: string;
  ackNote?: string | null;
  title: string;
  count: number;
  alerts: AlertWebhookItem[];
}

// --- inputs --------------------------------------------------------------------------------

const nameSchema = z
  .string()
  .trim()
  .min(1, "name is empty")
  .max(64, "name is longer than 64 characters")
  .regex(/^[^\x00-\x1f\x7f]+$/, "name must not contain control characters");

const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .max(2000, `${what} is longer than 2000 characters`)
    .superRefine((value, ctx) => {
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        ctx.addIssue({ code: "custom", message: `${what} is not a valid URL` });
        return;
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") ctx.addIssue({ code: "custom", message: `${what} must start with http:// or https://` });
    });

export const smtpUrlSchema = z
  .string()
  .trim()
  .max(500)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "url is not a valid SMTP URL (e.g. smtp://mail.example:587 or smtps://mail.example:465)" });
      return;
    }
    if (url.protocol !== "smtp:" && url.protocol !== "smtps:") ctx.addIssue({ code: "custom", message: "url must start with smtp:// or smtps://" });
    else if (url.username || url.password)
      ctx.addIssue({ code: "custom", message: "url must not carry a user or password: give them in username and password" });
    else if (!url.hostname) ctx.addIssue({ code: "custom", message: "url has no host" });
  });

const emailAddress = z.string().trim().max(254).email("not an email address");
const secretText = (what: string) => z.string().min(1, `${what} is empty`).max(1000, `${what} is longer than 1000 characters`);

export const addChannelInput = z.discriminatedUnion("type", [
  z.object({ type: z.literal("webhook"), name: nameSchema, url: httpUrl("url"), enabled: z.boolean().optional() }).strict(),
  z.object({ type: z.literal("slack"), name: nameSchema, url: httpUrl("url"), enabled: z.boolean().optional() }).strict(),
  z.object({ type: z.literal("ntfy"), name: nameSchema, url: httpUrl("url"), token: secretText("token").optional(), enabled: z.boolean().optional() }).strict(),
  z
    .object({
      type: z.literal("email"),
      name: nameSchema,
      url: smtpUrlSchema,
      from: emailAddress,
      to: z.array(emailAddress).min(1, "to needs at least one address").max(20, "at most 20 recipients"),
      username: z.string().trim().min(1).max(254).optional(),
      password: secretText("password").optional(),
      enabled: z.boolean().optional(),
    })
    .strict(),
]);
export type AddChannelInput = z.infer<typeof addChannelInput>;

/** Change a channel; a field left out stays as it is (`token: null` / `password: null` remove one). */
export const updateChannelInput = z
  .object({
    id: z.string().min(1).max(64),
    name: nameSchema.optional(),
    url: z.string().trim().max(2000).optional(),
    enabled: z.boolean().optional(),
    token: secretText("token").nullable().optional(),
    from: emailAddress.optional(),
    to: z.array(emailAddress).min(1).max(20).optional(),
    username: z.string().trim().min(1).max(254).nullable().optional(),
    password: secretText("password").nullable().optional(),
  })
  .strict();
export type UpdateChannelInput = z.infer<typeof updateChannelInput>;

export const channelIdInput = z.object({ id: z.string().min(1).max(64) }).strict();

const pageFields = {
  /** keyset paging: rows older than this id (the previous page's nextCursor) */
  cursor: z.number().int().positive().nullish(),
  limit: z.number().int().min(1).max(500).default(100),
};

export const alertListInput = z
  .object({
    state: z.enum(["open", "resolved", "all"]).default("all"),
    host: z.string().min(1).max(64).optional(),
    unit: z.string().min(1).max(256).optional(),
    ...pageFields,
  })
  .strict()
  .default({ state: "all", limit: 100 });

export const deliveryListInput = z
  .object({ channelId: z.string().min(1).max(64).optional(), ...pageFields })
  .strict()
  .default({ limit: 100 });

const globSchema = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} is empty`)
    .max(256, `${what} is longer than 256 characters`)
    .regex(/^[\x21-\x7e]+$/, `${what} may only contain visible ASCII characters (globs with * and ?)`);

export const addSilenceInput = z
  .object({
    /** a host name or glob ("gpu-a", "gpu-*", "*") */
    host: globSchema("host"),
    /** a unit name or glob; left out: every unit of the host and the host's own alerts */
    unit: globSchema("unit").optional(),
    rule: alertRuleSchema.optional(),
    minutes: z
      .number()
      .int()
      .min(1)
      .max(30 * 24 * 60, "at most 30 days"),
    reason: z.string().trim().min(1, "say why (reason)").max(500, "reason is longer than 500 characters"),
  })
  .strict();
export type AddSilenceInput = z.infer<typeof addSilenceInput>;

export const silenceIdInput = z.object({ id: z.number().int().positive() }).strict();

/** `alerts.ack`: "I'm on it", with an optional note (operators of that unit and admins). */
export const ackAlertInput = z
  .object({
    id: z.number().int().positive(),
    note: z.string().trim().max(500, "note is longer than 500 characters").optional(),
  })
  .strict();
