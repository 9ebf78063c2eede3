/** Small crypto helpers: random tokens, their stored hashes, constant-time comparison. */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 256 random bits, base64url (43 characters, cookie- and URL-safe). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/** Shape of a token made by `randomToken()`; checked before any lookup or header use. */
export const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

/** What we store instead of a session id or setup token: a leaked table row is not a credential. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

/**
 * Constant-time token comparison (agent bearer tokens). Both sides are hashed first so the
 * comparison runs on equal-length buffers and the length of the secret does not leak. An empty or
 * missing token never matches, so an unset configuration cannot be satisfied by an empty header.
 */
export function tokensEqual(a: string | null | undefined, b: string | null | undefined): boolean {
  if (typeof a !== "string" || typeof b !== "string" || a.length === 0 || b.length === 0) return false;
  const ha = createHash("sha256").update(a, "utf8").digest();
  const hb = createHash("sha256").update(b, "utf8").digest();
  return timingSafeEqual(ha, hb);
}

/** Extract the token from an `Authorization: Bearer <token>` header value; null if absent or malformed. */
export function bearerToken(header: string | null | undefined): string | null {
  if (typeof header !== "string") return null;
  const m = /^Bearer[ ]+([\x21-\x7e]+)[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}
