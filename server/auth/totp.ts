/**
 * Two-factor sign-in for local accounts: TOTP (RFC 6238, 30 s steps, 6 digits, SHA-1: what every
 * authenticator app speaks) through otplib, plus ten single-use recovery codes.
 *
 * - The secret is stored sealed with the panel's key (../store/secretBox.ts), bound to its row.
 * - A code is accepted for the current time step or one step either side (a phone's clock a
 *   little off, a code typed as it changes), and only for a step later than the last accepted
 *   one: the same code (or an older one) is refused the second time, on every replica (the check
 *   and the write are one conditional UPDATE).
 * - Recovery codes are shown once, stored as SHA-256 (50 random bits each), each used once.
 * - A sign-in whose password was right waits for its code as a challenge: a random id given to
 *   the browser (only its hash stored), valid 5 minutes, ended after 5 wrong codes.
 */
import { randomBytes } from "node:crypto";
import { authenticator } from "otplib";
import type { Store } from "../store/database";
import type { StoreSource } from "../store/lazyStore";
import { randomToken, sha256Hex, TOKEN_RE } from "./crypto";
import { AuthError, systemClock, type Clock, type Ms } from "./types";

export const TOTP_STEP_MS = 30_000;
/** Steps either side of now a code is still accepted for. */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
export const CHALLENGE_TTL_MS: Ms = 5 * 60_000;
export const CHALLENGE_MAX_FAILURES = 5;
/** What authenticator apps show as the account's issuer. */
export const TOTP_ISSUER = "gpudeck";

// Crockford's base32 (no i, l, o, u): read aloud or typed from paper without confusion
const RECOVERY_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export const totpSecretContext = (userId: number) => `user_totp.secret/${userId}`;

/** The time step a 6-digit code belongs to at `now` (within ±TOTP_WINDOW steps), or null. */
export function codeStep(secret: string, code: string, now: Ms): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const checker = authenticator.clone({ epoch: now, step: TOTP_STEP_MS / 1000, window: TOTP_WINDOW });
  const delta = checker.checkDelta(code, secret);
  return delta === null ? null : Math.floor(now / TOTP_STEP_MS) + delta;
}

/** The code an authenticator shows at `now` (for tests and the CLI's checks). */
export function codeAt(secret: string, now: Ms): string {
  return authenticator.clone({ epoch: now, step: TOTP_STEP_MS / 1000 }).generate(secret);
}

export function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b & 31]).join("");
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** A typed recovery code in its stored form: lower case, no separators, o→0 and i/l→1 (Crockford). */
export function normalizeRecoveryCode(text: string): string {
  return text.toLowerCase().replace(/[\s-]/g, "").replace(/o/g, "0").replace(/[il]/g, "1");
}

const isTotpCode = (text: string) => /^\d{6}$/.test(text.replace(/\s/g, ""));

export interface TwoFactorStatus {
  /** on: sign-in asks for a code */
  enabled: boolean;
  /** enrolment started, not yet confirmed with a code */
  pending: boolean;
  enabledAt: Ms | null;
  recoveryCodesLeft: number;
}

export type CodeCheck = { ok: true; method: "totp" | "recovery"; recoveryCodesLeft: number } | { ok: false };

export class TotpStore {
  private readonly clock: Clock;

  constructor(
    private readonly source: StoreSource,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
  }

  private store(): Promise<Store> {
    return this.source.get();
  }

  private async row(userId: number) {
    const { db } = await this.store();
    return db.selectFrom("user_totp").selectAll().where("user_id", "=", userId).executeTakeFirst();
  }

  async status(userId: number): Promise<TwoFactorStatus> {
    const row = await this.row(userId);
    return {
      enabled: row?.enabled_at != null,
      pending: row !== undefined && row.enabled_at == null,
      enabledAt: row?.enabled_at ?? null,
      recoveryCodesLeft: row ? (JSON.parse(row.recovery_codes) as string[]).length : 0,
    };
  }

  async isEnabled(userId: number): Promise<boolean> {
    return (await this.row(userId))?.enabled_at != null;
  }

  /** Start (or start over) enrolment: a new secret, not yet asked for at sign-in. Refused while it is on. */
  async begin(userId: number, username: string): Promise<{ secret: string; otpauthUrl: string }> {
    const store = await this.store();
    const secret = authenticator.generateSecret(20);
    const sealed = store.secrets.seal(secret, totpSecretContext(userId));
    const now = this.clock();
    await store.write(async (tx) => {
      const existing = await tx.selectFrom("user_totp").select("enabled_at").where("user_id", "=", userId).executeTakeFirst();
      if (existing?.enabled_at != null) throw new AuthError("two-factor", "two-factor sign-in is already on; turn it off first to set up another device");
      if (existing)
        await tx
          .updateTable("user_totp")
          .set({ secret: sealed, created_at: now, last_step: null, recovery_codes: "[]" })
          .where("user_id", "=", userId)
          .execute();
      else await tx.insertInto("user_totp").values({ user_id: userId, secret: sealed, created_at: now, enabled_at: null, last_step: null }).execute();
    });
    return { secret, otpauthUrl: authenticator.keyuri(username, TOTP_ISSUER, secret) };
  }

  /** Finish enrolment with a code from the new device: on from now; returns the recovery codes (shown once). */
  async confirm(userId: number, code: string): Promise<{ recoveryCodes: string[] }> {
    const store = await this.store();
    const row = await this.row(userId);
    if (!row || row.enabled_at != null) throw new AuthError("two-factor", row ? "two-factor sign-in is already on" : "start the set-up first (a new secret)");
    const now = this.clock();
    const step = codeStep(store.secrets.open(row.secret, totpSecretContext(userId)), code.replace(/\s/g, ""), now);
    if (step === null) throw new AuthError("two-factor", "that code is not right: type the 6 digits your authenticator app shows now for gpudeck");
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = recoveryCodes.map((c) => sha256Hex(normalizeRecoveryCode(c)));
    const r = await store.db
      .updateTable("user_totp")
      .set({ enabled_at: now, last_step: step, recovery_codes: JSON.stringify(hashes) })
      .where("user_id", "=", userId)
      .where("enabled_at", "is", null)
      .where("secret", "=", row.secret)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new AuthError("two-factor", "the set-up changed meanwhile (another tab?); start it again");
    return { recoveryCodes };
  }

  /**
   * A new set of recovery codes for a user who has it on (the old ones stop working), e.g. once
   * most are used: returns them (shown once). The caller has checked password and code.
   */
  async renewRecoveryCodes(userId: number): Promise<{ recoveryCodes: string[] }> {
    const { db } = await this.store();
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = recoveryCodes.map((c) => sha256Hex(normalizeRecoveryCode(c)));
    const r = await db
      .updateTable("user_totp")
      .set({ recovery_codes: JSON.stringify(hashes) })
      .where("user_id", "=", userId)
      .where("enabled_at", "is not", null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new AuthError("two-factor", "two-factor sign-in is not on, so there are no recovery codes to renew");
    return { recoveryCodes };
  }

  /**
   * Check a second factor of a user who has it on: a 6-digit code (current step ±1, later than
   * the last accepted) or an unused recovery code (used up by this).
   */
  async verify(userId: number, code: unknown): Promise<CodeCheck> {
    if (typeof code !== "string" || code.length === 0 || code.length > 64) return { ok: false };
    const store = await this.store();
    const row = await this.row(userId);
    if (!row || row.enabled_at == null) return { ok: false };
    const hashes = JSON.parse(row.recovery_codes) as string[];
    if (isTotpCode(code)) {
      const step = codeStep(store.secrets.open(row.secret, totpSecretContext(userId)), code.replace(/\s/g, ""), this.clock());
      if (step === null) return { ok: false };
      const r = await store.db
        .updateTable("user_totp")
        .set({ last_step: step })
        .where("user_id", "=", userId)
        .where("enabled_at", "is not", null)
        .where((eb) => eb.or([eb("last_step", "is", null), eb("last_step", "<", step)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows) === 1 ? { ok: true, method: "totp", recoveryCodesLeft: hashes.length } : { ok: false };
    }
    const hash = sha256Hex(normalizeRecoveryCode(code));
    if (!hashes.includes(hash)) return { ok: false };
    const rest = hashes.filter((h) => h !== hash);
    const r = await store.db
      .updateTable("user_totp")
      .set({ recovery_codes: JSON.stringify(rest) })
      .where("user_id", "=", userId)
      .where("recovery_codes", "=", row.recovery_codes)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? { ok: true, method: "recovery", recoveryCodesLeft: rest.length } : { ok: false };
  }

  /** Turn it off (the user with password and code, or an admin's reset). True when there was something to remove. */
  async remove(userId: number): Promise<boolean> {
    const store = await this.store();
    return store.write(async (tx) => {
      await tx.deleteFrom("totp_challenges").where("user_id", "=", userId).execute();
      const r = await tx.deleteFrom("user_totp").where("user_id", "=", userId).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    });
  }

  /** A sign-in waiting for its code: the id for the browser (only its hash is stored). */
  async createChallenge(userId: number): Promise<string> {
    const { db } = await this.store();
    const id = randomToken();
    const now = this.clock();
    await db.deleteFrom("totp_challenges").where("expires_at", "<", now).execute();
    await db
      .insertInto("totp_challenges")
      .values({ id_hash: sha256Hex(id), user_id: userId, created_at: now, expires_at: now + CHALLENGE_TTL_MS })
      .execute();
    return id;
  }

  /** The user a challenge is for, while it is valid; null otherwise. */
  async challengeUser(id: unknown): Promise<number | null> {
    if (typeof id !== "string" || !TOKEN_RE.test(id)) return null;
    const { db } = await this.store();
    const row = await db.selectFrom("totp_challenges").select(["user_id", "expires_at", "failures"]).where("id_hash", "=", sha256Hex(id)).executeTakeFirst();
    if (!row || row.expires_at <= this.clock() || row.failures >= CHALLENGE_MAX_FAILURES) return null;
    return row.user_id;
  }

  /** Count a wrong code; returns the tries left (0: the challenge has ended, the password is asked again). */
  async challengeFailed(id: string): Promise<number> {
    const { db } = await this.store();
    const hash = sha256Hex(id);
    await db
      .updateTable("totp_challenges")
      .set((eb) => ({ failures: eb("failures", "+", 1) }))
      .where("id_hash", "=", hash)
      .execute();
    const row = await db.selectFrom("totp_challenges").select("failures").where("id_hash", "=", hash).executeTakeFirst();
    const left = row ? Math.max(0, CHALLENGE_MAX_FAILURES - row.failures) : 0;
    if (left === 0) await this.endChallenge(id);
    return left;
  }

  async endChallenge(id: string): Promise<void> {
    const { db } = await this.store();
    await db.deleteFrom("totp_challenges").where("id_hash", "=", sha256Hex(id)).execute();
  }
}
