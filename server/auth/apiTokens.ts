/**
 * API tokens for scripts and CI: `Authorization: Bearer gdk_…` on the panel's API. A token is
 * `gdk_` + 32 random bytes (base64url), shown once when made; the database keeps its SHA-256 only.
 *
 * - personal: any user, for themselves. It acts as its owner and never beyond the owner's rights
 *   *now*: role and unit patterns are capped by the owner's at every request, and a disabled owner's
 *   tokens are refused.
 * - service: made by an admin for a machine (CI); its role and patterns are its own, whoever made it.
 *
 * Every request looks the token up (expiry and revocation apply at once on every replica);
 * revoking publishes a `sessions` panel event, so open bearer streams re-check and end within the
 * event bus's delay. `last_used_at` is written at most once a minute per token.
 */
import type { Selectable } from "kysely";
import { ROLES, isRole, type Role } from "../contract/actors";
import { splitHostPattern } from "../contract/unitNames";
import { NO_NOTIFIER, publishEvent, type EventNotifier } from "../store/events";
import type { StoreSource } from "../store/lazyStore";
import type { ApiTokensTable } from "../store/schema";
import { randomToken, sha256Hex } from "./crypto";
import { AuthError, systemClock, type Clock, type Ms, type Principal, type User } from "./types";
import { parsePatterns, unitPatternProblem } from "./userFields";

export const API_TOKEN_PREFIX = "gdk_";
export const API_TOKEN_RE = /^gdk_[A-Za-z0-9_-]{43}$/;
export const API_TOKEN_MAX_DAYS = 366;
export const API_TOKEN_NAME_MAX = 64;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9 ._-]*$/;
const TOUCH_MS = 60_000;
const DAY: Ms = 24 * 60 * 60 * 1000;

export type ApiTokenKind = "personal" | "service";

/** What `tokens.list` shows: never the token. */
export interface ApiTokenInfo {
  id: number;
  name: string;
  kind: ApiTokenKind;
  owner: string;
  ownerId: number;
  role: Role;
  units: string[];
  createdAt: Ms;
  expiresAt: Ms;
  lastUsedAt: Ms | null;
  revokedAt: Ms | null;
}

export type ApiTokenRefusal = "malformed" | "unknown" | "expired" | "revoked" | "owner-disabled";

export const API_TOKEN_MESSAGES: Record<ApiTokenRefusal, string> = {
  malformed: "that is not a gpudeck API token (gdk_…)",
  unknown: "unknown API token",
  expired: "this API token has expired; make a new one on the Account page",
  revoked: "this API token was revoked",
  "owner-disabled": "the account this API token belongs to is disabled",
};

export type ApiTokenCheck = { ok: true; token: ApiTokenInfo; principal: Principal } | { ok: false; reason: ApiTokenRefusal; message: string };

export function newApiTokenSecret(): string {
  return `${API_TOKEN_PREFIX}${randomToken(32)}`;
}

export function tokenNameProblem(name: string): string | null {
  if (name.length === 0) return "the token needs a name (what uses it, e.g. 'ci-deploy')";
  if (name.length > API_TOKEN_NAME_MAX) return `a token name is at most ${API_TOKEN_NAME_MAX} characters`;
  if (!NAME_RE.test(name)) return "a token name may only contain letters, digits, spaces and . _ - (starting with a letter or digit)";
  return null;
}

const rank = (role: Role): number => ROLES.indexOf(role);

/**
 * Does glob `outer` match every name glob `inner` can match? Sound, not complete: `*` in `outer`
 * covers any run of `inner` without `@`, `?` covers one character that is neither `*` nor `@`.
 */
function globCovers(outer: string, inner: string): boolean {
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === outer.length) r = j === inner.length;
    else if (outer[i] === "*") r = go(i + 1, j) || (j < inner.length && inner[j] !== "@" && go(i, j + 1));
    else if (j === inner.length) r = false;
    else if (outer[i] === "?") r = inner[j] !== "*" && inner[j] !== "@" && go(i + 1, j + 1);
    else r = outer[i] === inner[j] && inner[j] !== "*" && inner[j] !== "?" && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** Does one of `owner`'s patterns cover everything `pattern` covers (host part included)? */
export function patternWithin(pattern: string, owner: readonly string[]): boolean {
  const p = splitHostPattern(pattern);
  return owner.some((o) => {
    const q = splitHostPattern(o);
    if (q.hostGlob !== null && (p.hostGlob === null || !globCovers(q.hostGlob, p.hostGlob))) return false;
    return globCovers(q.unitGlob, p.unitGlob);
  });
}

/** The rights a token acts with now: a personal token's capped by its owner's. */
export function tokenRights(token: { kind: ApiTokenKind; role: Role; units: readonly string[] }, owner: { role: Role; unitPatterns: readonly string[] }) {
  if (token.kind === "service") return { role: token.role, unitPatterns: [...token.units] };
  const role = rank(token.role) <= rank(owner.role) ? token.role : owner.role;
  if (role !== "operator") return { role, unitPatterns: [] as string[] };
  if (owner.role === "admin") return { role, unitPatterns: [...token.units] };
  // the owner is an operator: the token's own patterns that are still within theirs (or theirs, for a capped admin token)
  const units = token.role === "operator" ? token.units.filter((u) => patternWithin(u, owner.unitPatterns)) : owner.unitPatterns;
  return { role, unitPatterns: [...units] };
}

type Row = Selectable<ApiTokensTable> & { owner: string };

function info(row: Row): ApiTokenInfo {
  return {
    id: Number(row.id),
    name: row.name,
    kind: row.kind === "service" ? "service" : "personal",
    owner: row.owner,
    ownerId: Number(row.owner_id),
    role: isRole(row.role) ? row.role : "viewer",
    units: parsePatterns(row.units),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export interface CreateTokenInput {
  owner: User;
  name: string;
  kind: ApiTokenKind;
  role: Role;
  /** Operator tokens: unit patterns. Default: the owner's (an operator's), else none. */
  units?: readonly string[];
  expiresInDays: number;
}

export class ApiTokenStore {
  private readonly clock: Clock;
  private readonly events: EventNotifier;

  constructor(
    private readonly source: StoreSource,
    options: { clock?: Clock; events?: EventNotifier } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.events = options.events ?? NO_NOTIFIER;
  }

  /** Make a token; `token` is the secret, returned this once. Throws AuthError with a sentence to show. */
  async create(input: CreateTokenInput): Promise<{ token: string; info: ApiTokenInfo }> {
    const { owner, kind, role } = input;
    const name = input.name.trim();
    const problem = tokenNameProblem(name);
    if (problem) throw new AuthError("invalid-token", problem);
    if (!Number.isInteger(input.expiresInDays) || input.expiresInDays < 1 || input.expiresInDays > API_TOKEN_MAX_DAYS) {
      throw new AuthError("invalid-token", `a token expires after 1 to ${API_TOKEN_MAX_DAYS} days`);
    }
    if (owner.disabled) throw new AuthError("invalid-token", "a disabled account cannot make tokens");
    if (kind === "service" && owner.role !== "admin") throw new AuthError("invalid-token", "only admins make service tokens");
    if (kind === "personal" && rank(role) > rank(owner.role)) {
      throw new AuthError("invalid-token", `a personal token has at most your own rights: you are ${owner.role}, not ${role}`);
    }
    const units = role === "operator" ? [...(input.units ?? (owner.role === "operator" ? owner.unitPatterns : []))] : [];
    for (const u of units) {
      const bad = unitPatternProblem(u);
      if (bad) throw new AuthError("invalid-unit-pattern", bad);
      if (kind === "personal" && owner.role === "operator" && !patternWithin(u, owner.unitPatterns)) {
        throw new AuthError("invalid-unit-pattern", `unit pattern '${u}' reaches beyond your own (${owner.unitPatterns.join(", ") || "none"})`);
      }
    }
    if (role === "operator" && units.length === 0) throw new AuthError("invalid-unit-pattern", "an operator token needs unit patterns (e.g. 'vllm-*')");
    const secret = newApiTokenSecret();
    const now = this.clock();
    const { db } = await this.source.get();
    const clash = await db
      .selectFrom("api_tokens")
      .select("id")
      .where("owner_id", "=", owner.id)
      .where("revoked_at", "is", null)
      .where("expires_at", ">", now)
      .where((eb) => eb(eb.fn("lower", ["name"]), "=", name.toLowerCase()))
      .executeTakeFirst();
    if (clash) throw new AuthError("invalid-token", `you already have a token named '${name}'; revoke it or pick another name`);
    const row = await db
      .insertInto("api_tokens")
      .values({
        owner_id: owner.id,
        name,
        kind,
        role,
        units: JSON.stringify(units),
        token_hash: sha256Hex(secret),
        created_at: now,
        expires_at: now + input.expiresInDays * DAY,
        last_used_at: null,
        revoked_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { token: secret, info: info({ ...row, owner: owner.username }) };
  }

  private query() {
    return this.source
      .get()
      .then(({ db }) =>
        db
          .selectFrom("api_tokens as t")
          .innerJoin("users as u", "u.id", "t.owner_id")
          .selectAll("t")
          .select(["u.username as owner", "u.disabled as owner_disabled", "u.role as owner_role", "u.unit_patterns as owner_patterns"]),
      );
  }

  /** Tokens, newest first: one owner's, or (null) everyone's. Revoked ones only with `revoked`. */
  async list(ownerId: number | null, options: { revoked?: boolean } = {}): Promise<ApiTokenInfo[]> {
    let q = await this.query();
    if (ownerId !== null) q = q.where("t.owner_id", "=", ownerId);
    if (!options.revoked) q = q.where("t.revoked_at", "is", null);
    return (await q.orderBy("t.id", "desc").limit(1000).execute()).map(info);
  }

  async get(id: number): Promise<ApiTokenInfo | null> {
    const row = await (await this.query()).where("t.id", "=", id).executeTakeFirst();
    return row ? info(row) : null;
  }

  /** Revoke: refused from now on, on every replica; open streams of the owner re-check at once. */
  async revoke(id: number): Promise<ApiTokenInfo | null> {
    const store = await this.source.get();
    const now = this.clock();
    const done = await store.write(async (tx) => {
      const r = await tx
        .updateTable("api_tokens")
        .set({ revoked_at: now })
        .where("id", "=", id)
        .where("revoked_at", "is", null)
        .returning("owner_id")
        .executeTakeFirst();
      if (r) await publishEvent(tx, store.dialect, "sessions", { userId: Number(r.owner_id), username: null }, now);
      return r !== undefined;
    });
    if (done) this.events.poke();
    return this.get(id);
  }

  /** The token behind a bearer secret, with the principal it acts as; `touch` records its use. */
  async authenticate(secret: string | null | undefined, options: { touch?: boolean } = {}): Promise<ApiTokenCheck> {
    if (typeof secret !== "string" || !API_TOKEN_RE.test(secret)) return this.refuse("malformed");
    const row = await (await this.query()).where("t.token_hash", "=", sha256Hex(secret)).executeTakeFirst();
    return this.check(row, options.touch !== false);
  }

  /** Is the token still good (an open stream's re-check)? */
  async stillValid(id: number): Promise<boolean> {
    return (await this.recheck(id)) !== null;
  }

  /** The principal the token acts as now (its owner's current role and units), or null when it is no longer good. */
  async recheck(id: number): Promise<Principal | null> {
    const row = await (await this.query()).where("t.id", "=", id).executeTakeFirst();
    const check = await this.check(row, false);
    return check.ok ? check.principal : null;
  }

  private refuse(reason: ApiTokenRefusal): ApiTokenCheck {
    return { ok: false, reason, message: API_TOKEN_MESSAGES[reason] };
  }

  private async check(row: (Row & { owner_disabled: number; owner_role: string; owner_patterns: string }) | undefined, touch: boolean): Promise<ApiTokenCheck> {
    if (!row) return this.refuse("unknown");
    const now = this.clock();
    if (row.revoked_at !== null) return this.refuse("revoked");
    if (now >= row.expires_at) return this.refuse("expired");
    const token = info(row);
    if (token.kind === "personal" && row.owner_disabled === 1) return this.refuse("owner-disabled");
    if (touch && (row.last_used_at === null || now - row.last_used_at >= TOUCH_MS)) {
      const { db } = await this.source.get();
      await db.updateTable("api_tokens").set({ last_used_at: now }).where("id", "=", token.id).execute();
      token.lastUsedAt = now;
    }
    const rights = tokenRights(token, { role: isRole(row.owner_role) ? row.owner_role : "viewer", unitPatterns: parsePatterns(row.owner_patterns) });
    return {
      ok: true,
      token,
      principal: {
        userId: token.ownerId,
        username: token.owner,
        role: rights.role,
        unitPatterns: rights.unitPatterns,
        via: "token",
        token: { id: token.id, name: token.name, kind: token.kind, expiresAt: token.expiresAt },
      },
    };
  }
}

/** The name an action by a token is audited under: "ada (ci-deploy)". */
export function tokenActorName(owner: string, tokenName: string): string {
  return `${owner} (${tokenName})`;
}
