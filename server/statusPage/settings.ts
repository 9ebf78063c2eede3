/**
 * The status page's settings, one row in the panel database: on or off, public or behind a link
 * token, whether host names show, and the named groups. The token is stored as its sha256 (a
 * leaked row is not a way in) and shown once, when rotated. GPUDECK_STATUS_TOKEN turns the page
 * on with that token whatever the row says (the row's token still works beside it).
 */
import type { Kysely } from "kysely";
import { randomToken, sha256Hex, tokensEqual } from "../auth/crypto";
import type { StatusGroup, UpdateStatusPageInput } from "../contract/statusPage";
import type { PanelSchema } from "../store/schema";

export interface StatusSettings {
  enabled: boolean;
  public: boolean;
  showHosts: boolean;
  groups: StatusGroup[];
  tokenHash: string | null;
  tokenHint: string | null;
  updatedAtMs: number | null;
  updatedBy: string | null;
}

export const DEFAULT_SETTINGS: StatusSettings = {
  enabled: false,
  public: false,
  showHosts: false,
  groups: [],
  tokenHash: null,
  tokenHint: null,
  updatedAtMs: null,
  updatedBy: null,
};

const hint = (token: string) => `…${token.slice(-4)}`;

export async function readSettings(db: Kysely<PanelSchema>): Promise<StatusSettings> {
  const row = await db.selectFrom("status_page").selectAll().where("id", "=", 1).executeTakeFirst();
  if (!row) return DEFAULT_SETTINGS;
  let groups: StatusGroup[] = [];
  try {
    groups = JSON.parse(row.groups) as StatusGroup[];
  } catch {
    groups = [];
  }
  return {
    enabled: row.enabled === 1,
    public: row.public === 1,
    showHosts: row.show_hosts === 1,
    groups,
    tokenHash: row.token_hash,
    tokenHint: row.token_hint,
    updatedAtMs: row.updated_at,
    updatedBy: row.updated_by,
  };
}

async function write(db: Kysely<PanelSchema>, s: StatusSettings): Promise<void> {
  const values = {
    enabled: s.enabled ? 1 : 0,
    public: s.public ? 1 : 0,
    show_hosts: s.showHosts ? 1 : 0,
    groups: JSON.stringify(s.groups),
    token_hash: s.tokenHash,
    token_hint: s.tokenHint,
    updated_at: s.updatedAtMs,
    updated_by: s.updatedBy,
  };
  await db
    .insertInto("status_page")
    .values({ id: 1, ...values })
    .onConflict((oc) => oc.column("id").doUpdateSet(values))
    .execute();
}

export async function updateSettings(db: Kysely<PanelSchema>, change: UpdateStatusPageInput, by: string, nowMs: number): Promise<StatusSettings> {
  const before = await readSettings(db);
  const after: StatusSettings = {
    ...before,
    enabled: change.enabled ?? before.enabled,
    public: change.public ?? before.public,
    showHosts: change.showHosts ?? before.showHosts,
    groups: change.groups ?? before.groups,
    updatedAtMs: nowMs,
    updatedBy: by,
  };
  await write(db, after);
  return after;
}

/** A new link token (the old one stops working); the token itself is returned this once. */
export async function rotateToken(db: Kysely<PanelSchema>, by: string, nowMs: number): Promise<{ token: string; settings: StatusSettings }> {
  const token = randomToken(32);
  const before = await readSettings(db);
  const settings = { ...before, tokenHash: sha256Hex(token), tokenHint: hint(token), updatedAtMs: nowMs, updatedBy: by };
  await write(db, settings);
  return { token, settings };
}

export type Access = { ok: true } | { ok: false; status: 401 | 403 | 404; message: string };

/** May a request with this token (or none) see the page? */
export function checkAccess(s: StatusSettings, envToken: string | null, token: string | null): Access {
  const enabled = s.enabled || envToken !== null;
  if (!enabled) return { ok: false, status: 404, message: "There is no status page here." };
  if (s.public && s.enabled) return { ok: true };
  if (!token) return { ok: false, status: 401, message: "This status page needs its link (with the token)." };
  const good = (envToken !== null && tokensEqual(token, envToken)) || (s.enabled && s.tokenHash !== null && tokensEqual(sha256Hex(token), s.tokenHash));
  return good ? { ok: true } : { ok: false, status: 403, message: "This status page link is not valid (it may have been replaced)." };
}

export function envTokenHint(envToken: string | null): string | null {
  return envToken ? hint(envToken) : null;
}
