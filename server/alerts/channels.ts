/**
 * Where alerts go: channels added by admins on the Alerts page (the `alert_channels` table) and
 * those the environment names (GPUDECK_ALERT_WEBHOOK_URL, GPUDECK_ALERT_CHANNELS; read-only in
 * the UI). Secrets (a webhook's URL, which carries its token; an ntfy URL and token; an SMTP
 * password) are stored encrypted with the panel's secret key (../store/secretBox.ts), like agent
 * tokens on the Hosts page, and never leave the server: views carry a hint at most.
 */
import { createHash, randomBytes } from "node:crypto";
import { addChannelInput, type AddChannelInput, type ChannelKind, type ChannelType, type ChannelView, type UpdateChannelInput } from "../contract/alerts";
import { sameOrigin, secretMustFollowText } from "../contract/origin";
import type { Store } from "../store/database";
import { channelSecretContext } from "../store/migrations/004_secrets";

/** A channel with its secrets, server-side only. */
export interface Channel {
  id: string;
  type: ChannelKind;
  name: string;
  enabled: boolean;
  source: "panel" | "env";
  url: string;
  /** ntfy */
  token: string | null;
  /** email */
  from: string | null;
  to: string[];
  username: string | null;
  password: string | null;
  createdAtMs: number;
  createdBy: string | null;
}

export class ChannelConfigError extends Error {}

interface ChannelConfigJson {
  from?: string;
  to?: string[];
  username?: string | null;
}
interface ChannelSecretJson {
  url: string;
  token?: string | null;
  password?: string | null;
}

function fromInput(input: AddChannelInput, id: string, source: Channel["source"], by: string | null, nowMs: number): Channel {
  return {
    id,
    type: input.type,
    name: input.name,
    enabled: input.enabled ?? true,
    source,
    url: input.url,
    token: input.type === "ntfy" ? (input.token ?? null) : null,
    from: input.type === "email" ? input.from : null,
    to: input.type === "email" ? input.to : [],
    username: input.type === "email" ? (input.username ?? null) : null,
    password: input.type === "email" ? (input.password ?? null) : null,
    createdAtMs: nowMs,
    createdBy: by,
  };
}

const envId = (name: string) => `env-${createHash("sha256").update(name).digest("hex").slice(0, 12)}`;

/** GPUDECK_ALERT_WEBHOOK_URL (one generic webhook) and GPUDECK_ALERT_CHANNELS (a JSON list of what alerts.channels.add takes). */
export function channelsFromEnv(env: Readonly<Record<string, string | undefined>>): Channel[] {
  const out: Channel[] = [];
  const url = env.GPUDECK_ALERT_WEBHOOK_URL?.trim();
  if (url) {
    const parsed = addChannelInput.safeParse({ type: "webhook", name: "GPUDECK_ALERT_WEBHOOK_URL", url });
    if (!parsed.success) throw new ChannelConfigError(`GPUDECK_ALERT_WEBHOOK_URL: ${parsed.error.issues[0]!.message}`);
    out.push(fromInput(parsed.data, envId(parsed.data.name), "env", null, 0));
  }
  const list = env.GPUDECK_ALERT_CHANNELS?.trim();
  if (list) {
    let raw: unknown;
    try {
      raw = JSON.parse(list);
    } catch (err) {
      throw new ChannelConfigError(`GPUDECK_ALERT_CHANNELS is not JSON: ${(err as Error).message}`);
    }
    if (!Array.isArray(raw)) throw new ChannelConfigError("GPUDECK_ALERT_CHANNELS must be a JSON list of channels");
    raw.forEach((entry, i) => {
      const parsed = addChannelInput.safeParse(entry);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw new ChannelConfigError(`GPUDECK_ALERT_CHANNELS[${i}]${issue.path.length ? `.${issue.path.join(".")}` : ""}: ${issue.message}`);
      }
      if (out.some((c) => c.name === parsed.data.name))
        throw new ChannelConfigError(`GPUDECK_ALERT_CHANNELS[${i}]: a second channel named ${parsed.data.name}`);
      out.push(fromInput(parsed.data, envId(parsed.data.name), "env", null, 0));
    });
  }
  return out;
}

/** "https://hooks.slack.com/…k3Yz": where it goes, never enough to use it. */
export function urlHint(url: string): string {
  try {
    const u = new URL(url);
    if (u.protocol === "smtp:" || u.protocol === "smtps:") return `${u.protocol}//${u.host}`;
    const rest = `${u.pathname}${u.search}`.replace(/^\/$/, "");
    return rest.length >= 12 ? `${u.origin}/…${rest.slice(-4)}` : rest ? `${u.origin}/…` : u.origin;
  } catch {
    return "…";
  }
}

export function secretHint(secret: string | null): string | null {
  if (!secret) return null;
  return secret.length >= 12 ? `…${secret.slice(-4)}` : "…";
}

export function channelView(c: Channel, lastDelivery: ChannelView["lastDelivery"]): ChannelView {
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    enabled: c.enabled,
    source: c.source,
    urlHint: urlHint(c.url),
    tokenHint: secretHint(c.token),
    from: c.from,
    to: c.to,
    username: c.username,
    passwordSet: c.password !== null,
    createdAtMs: c.createdAtMs,
    createdBy: c.createdBy,
    lastDelivery,
  };
}

export class ChannelStore {
  private cache: { at: number; list: Channel[] } | null = null;

  constructor(
    /** the database and its secret box */
    private readonly store: () => Promise<Pick<Store, "db" | "secrets">>,
    private readonly fromEnv: readonly Channel[],
    /** how long a read of the table is reused (another replica's change shows within it) */
    private readonly cacheMs = 2000,
    /** channels made per person (a subscribed browser, server/push/), found by id only: never listed, never sent everything */
    private readonly dynamic: (id: string) => Promise<Channel | null> = async () => null,
  ) {}

  async all(): Promise<Channel[]> {
    if (this.cache && Date.now() - this.cache.at < this.cacheMs) return this.cache.list;
    const { db, secrets } = await this.store();
    const rows = await db.selectFrom("alert_channels").selectAll().orderBy("name").execute();
    const stored = rows.map((r): Channel => {
      const config = JSON.parse(r.config) as ChannelConfigJson;
      const secret = JSON.parse(secrets.open(r.secret, channelSecretContext(r.id))) as ChannelSecretJson;
      return {
        id: r.id,
        type: r.type,
        name: r.name,
        enabled: r.enabled === 1,
        source: "panel",
        url: secret.url,
        token: secret.token ?? null,
        from: config.from ?? null,
        to: config.to ?? [],
        username: config.username ?? null,
        password: secret.password ?? null,
        createdAtMs: r.created_at,
        createdBy: r.created_by,
      };
    });
    const list = [...this.fromEnv, ...stored];
    this.cache = { at: Date.now(), list };
    return list;
  }

  async get(id: string): Promise<Channel | null> {
    return (await this.all()).find((c) => c.id === id) ?? null;
  }

  /** A per-person channel (a push subscription) by its id; null when there is none (any longer). */
  resolveDynamic(id: string): Promise<Channel | null> {
    return this.dynamic(id);
  }

  async add(input: AddChannelInput, by: string, nowMs: number): Promise<Channel> {
    if ((await this.all()).some((c) => c.name === input.name)) throw new ChannelConfigError(`A channel named ${input.name} exists already.`);
    const channel = fromInput(input, `ch-${randomBytes(8).toString("hex")}`, "panel", by, nowMs);
    const { db, secrets } = await this.store();
    await db
      .insertInto("alert_channels")
      .values({ ...this.columns(channel, secrets), id: channel.id, created_at: nowMs, created_by: by, updated_at: nowMs })
      .execute();
    this.cache = null;
    return channel;
  }

  /** The changed channel; validated as a whole, the way add would take it. */
  async update(change: UpdateChannelInput, nowMs: number): Promise<Channel> {
    const before = await this.get(change.id);
    if (!before || before.source !== "panel")
      throw new ChannelConfigError(before ? `Channel ${before.name} comes from the environment; change it there.` : "There is no such channel.");
    if (change.name !== undefined && change.name !== before.name && (await this.all()).some((c) => c.name === change.name)) {
      throw new ChannelConfigError(`A channel named ${change.name} exists already.`);
    }
    const wrong = (["token", "from", "to", "username", "password"] as const).filter((k) => change[k] !== undefined && !fieldsOf(before.type).includes(k));
    if (wrong.length) throw new ChannelConfigError(`A ${before.type} channel has no ${wrong.join(", ")}.`);
    // a kept token or password goes wherever the url points: a new origin needs it again
    if (change.url !== undefined && !sameOrigin(before.url, change.url)) {
      if (before.type === "ntfy" && before.token !== null && change.token === undefined)
        throw new ChannelConfigError(secretMustFollowText("ntfy token", "token, or token: null to send none", before.url, change.url));
      if (before.type === "email" && before.password !== null && change.password === undefined)
        throw new ChannelConfigError(secretMustFollowText("SMTP password", "password, or password: null to sign in with none", before.url, change.url));
    }
    const merged = {
      type: before.type,
      name: change.name ?? before.name,
      url: change.url ?? before.url,
      enabled: change.enabled ?? before.enabled,
      ...(before.type === "ntfy" ? { token: (change.token === undefined ? before.token : change.token) ?? undefined } : {}),
      ...(before.type === "email"
        ? {
            from: change.from ?? before.from,
            to: change.to ?? before.to,
            username: (change.username === undefined ? before.username : change.username) ?? undefined,
            password: (change.password === undefined ? before.password : change.password) ?? undefined,
          }
        : {}),
    };
    const parsed = addChannelInput.safeParse(merged);
    if (!parsed.success) throw new ChannelConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
    const channel = { ...fromInput(parsed.data, before.id, "panel", before.createdBy, before.createdAtMs) };
    const { db, secrets } = await this.store();
    await db
      .updateTable("alert_channels")
      .set({ ...this.columns(channel, secrets), updated_at: nowMs })
      .where("id", "=", before.id)
      .execute();
    this.cache = null;
    return channel;
  }

  async remove(id: string): Promise<Channel> {
    const before = await this.get(id);
    if (!before || before.source !== "panel")
      throw new ChannelConfigError(before ? `Channel ${before.name} comes from the environment; change it there.` : "There is no such channel.");
    const { db } = await this.store();
    await db.transaction().execute(async (trx) => {
      await trx.deleteFrom("alert_channels").where("id", "=", id).execute();
      await trx
        .updateTable("alert_outbox")
        .set({ status: "failed", last_error: "the channel was removed", lease_until: null })
        .where("channel_id", "=", id)
        .where("status", "=", "pending")
        .execute();
    });
    this.cache = null;
    return before;
  }

  private columns(c: Channel, secrets: Store["secrets"]) {
    const config: ChannelConfigJson = c.type === "email" ? { from: c.from ?? undefined, to: c.to, username: c.username } : {};
    const secret: ChannelSecretJson = { url: c.url, ...(c.type === "ntfy" ? { token: c.token } : {}), ...(c.type === "email" ? { password: c.password } : {}) };
    return {
      // only channels added on the Alerts page are stored, and "push" is never one
      type: c.type as ChannelType,
      name: c.name,
      enabled: c.enabled ? 1 : 0,
      config: JSON.stringify(config),
      secret: secrets.seal(JSON.stringify(secret), channelSecretContext(c.id)),
    };
  }
}

function fieldsOf(type: ChannelKind): string[] {
  if (type === "ntfy") return ["token"];
  if (type === "email") return ["from", "to", "username", "password"];
  return [];
}
