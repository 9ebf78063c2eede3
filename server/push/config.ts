/**
 * Web Push settings from the environment (the config file's [panel.push] maps onto these):
 *   GPUDECK_PUSH                      "0" turns push off (default on: the Account page offers it)
 *   GPUDECK_PUSH_SUBJECT              the VAPID subject, mailto: or https: (default mailto:gpudeck@localhost)
 *   GPUDECK_PUSH_GROUPS               JSON { "oncall": ["alice", "bob", "role:admin"] }: the channel
 *                                     push:oncall reaches these users' subscribed browsers
 *   GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK  "1": a plain-http endpoint on 127.0.0.1 is taken (tests' local push service)
 */
import { z } from "zod";

export const DEFAULT_PUSH_SUBJECT = "mailto:gpudeck@localhost";
/** subscribed browsers per user at most (a new one past it is refused: remove one first) */
export const MAX_SUBSCRIPTIONS_PER_USER = 10;
/** groups at most, and members per group */
export const MAX_GROUPS = 50;
export const MAX_GROUP_MEMBERS = 200;

export interface PushConfig {
  enabled: boolean;
  subject: string;
  /** group name → usernames and "role:<viewer|operator|admin>" entries */
  groups: Record<string, string[]>;
  allowHttpLoopback: boolean;
  maxPerUser: number;
}

export class PushConfigError extends Error {}

const GROUP_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const member = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .refine(
    (m) => !m.startsWith("role:") || ["role:viewer", "role:operator", "role:admin"].includes(m),
    "a role entry is role:viewer, role:operator or role:admin",
  );
const groupsSchema = z
  .record(
    z.string().regex(GROUP_NAME, "a group name is lower-case letters, digits, - and _ (up to 40)"),
    z.array(member).min(1, "a group needs at least one member").max(MAX_GROUP_MEMBERS),
  )
  .refine((g) => Object.keys(g).length <= MAX_GROUPS, `at most ${MAX_GROUPS} groups`);

/** "mailto:ops@example.com" or "https://ops.example.com/": what push services may write to about this panel. */
export function subjectProblem(subject: string): string | null {
  let u: URL;
  try {
    u = new URL(subject);
  } catch {
    return "must be a mailto: or https: URL";
  }
  if (u.protocol === "mailto:") return u.pathname.includes("@") ? null : "a mailto: subject needs an address (mailto:ops@example.com)";
  if (u.protocol === "https:") return null;
  return "must be a mailto: or https: URL";
}

export function loadPushConfig(env: Readonly<Record<string, string | undefined>>): PushConfig {
  const off = env.GPUDECK_PUSH?.trim();
  if (off && off !== "0" && off !== "1") throw new PushConfigError(`GPUDECK_PUSH must be 0 or 1 (got "${off}")`);
  const subject = env.GPUDECK_PUSH_SUBJECT?.trim() || DEFAULT_PUSH_SUBJECT;
  const problem = subjectProblem(subject);
  if (problem) throw new PushConfigError(`GPUDECK_PUSH_SUBJECT ${problem} (got "${subject}")`);
  let groups: Record<string, string[]> = {};
  const rawGroups = env.GPUDECK_PUSH_GROUPS?.trim();
  if (rawGroups) {
    let raw: unknown;
    try {
      raw = JSON.parse(rawGroups);
    } catch (err) {
      throw new PushConfigError(`GPUDECK_PUSH_GROUPS is not JSON: ${(err as Error).message}`);
    }
    const parsed = groupsSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new PushConfigError(`GPUDECK_PUSH_GROUPS${issue.path.length ? `.${issue.path.join(".")}` : ""}: ${issue.message}`);
    }
    groups = parsed.data;
  }
  const loopback = env.GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK?.trim();
  return { enabled: off !== "0", subject, groups, allowHttpLoopback: loopback === "1", maxPerUser: MAX_SUBSCRIPTIONS_PER_USER };
}

/** Why a push endpoint is refused, or null: https only; http on 127.0.0.1 when GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK=1. */
export function endpointProblem(endpoint: string, allowHttpLoopback: boolean): string | null {
  let u: URL;
  try {
    u = new URL(endpoint);
  } catch {
    return "the endpoint is not a URL";
  }
  if (u.username || u.password) return "the endpoint must not carry a user or password";
  if (u.protocol === "https:") return null;
  if (u.protocol === "http:" && allowHttpLoopback && u.hostname === "127.0.0.1") return null;
  return u.protocol === "http:" && u.hostname === "127.0.0.1"
    ? "the endpoint must be https (plain http on 127.0.0.1 needs GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK=1, for tests)"
    : "the endpoint must be https";
}
