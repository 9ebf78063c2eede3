/**
 * Password hashing (argon2id via @node-rs/argon2) and the password policy.
 */
import { hash, verify, type Algorithm, type Options } from "@node-rs/argon2";
import { randomToken } from "./crypto";

export const PASSWORD_MIN_LENGTH = 12;
/** Bounds the work a login request can ask for and the size of a request body. */
export const PASSWORD_MAX_LENGTH = 1024;

// `Algorithm` is a const enum in the typings; isolatedModules cannot inline it, so use its value.
const ARGON2ID = 2 as Algorithm;

/** OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane): ~40 ms on a server core. */
export const ARGON2_OPTIONS: Readonly<Options> = Object.freeze({
  algorithm: ARGON2ID,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1,
});

/** Passwords are compared as NFC so the same password typed on different systems matches. */
function normalise(password: string): string {
  return password.normalize("NFC");
}

/** A reason the password is not acceptable, or null. */
export function passwordProblem(password: string, username: string): string | null {
  if (typeof password !== "string") return "password is required";
  const length = [...normalise(password)].length;
  if (length < PASSWORD_MIN_LENGTH) return `password must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if (length > PASSWORD_MAX_LENGTH) return `password must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (normalise(password).toLowerCase() === username.normalize("NFC").toLowerCase()) {
    return "password must not be the username";
  }
  if (/^(.)\1*$/su.test(password)) return "password must not be one repeated character";
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  return hash(normalise(password), ARGON2_OPTIONS);
}

/** False (never throws) for a wrong password or a malformed stored hash. */
export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  if (typeof password !== "string" || password.length > PASSWORD_MAX_LENGTH * 2) return false;
  try {
    return await verify(storedHash, normalise(password));
  } catch {
    return false;
  }
}

/** True when the stored hash was made with other parameters than today's (rehash after login). */
export function needsRehash(storedHash: string): boolean {
  const m = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(storedHash);
  if (!m) return true;
  return Number(m[1]) !== ARGON2_OPTIONS.memoryCost || Number(m[2]) !== ARGON2_OPTIONS.timeCost || Number(m[3]) !== ARGON2_OPTIONS.parallelism;
}

let dummyHash: Promise<string> | null = null;

/**
 * Verify against a throw-away hash with the real parameters: used when the user is unknown (or has
 * no password) so that failure takes as long as a wrong password for a real user.
 */
export async function verifyDummy(password: string): Promise<false> {
  dummyHash ??= hash(randomToken(), ARGON2_OPTIONS);
  await verifyPassword(await dummyHash, typeof password === "string" ? password : "");
  return false;
}
