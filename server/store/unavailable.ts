/**
 * "The database is not there right now" as opposed to a bug or a bad request: a PostgreSQL
 * server that is down, restarting or unreachable, a pool that cannot connect in time, an SQLite
 * file that is locked too long, read-only or on a full disk. The panel answers those with
 * SERVICE_UNAVAILABLE and a sentence saying so (never the database's password), and keeps its
 * agent streams running: live data does not go through the database.
 */

/** Thrown where the store could not be opened (or was closed); its message is safe to show. */
export class DatabaseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "DatabaseUnavailableError";
  }
}

// Node's socket errors and PostgreSQL's SQLSTATEs for "no connection" (class 08), a server
// shutting down or starting (57P01-57P03) and a full connection table (53300).
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);
const PG_CODES = /^(08...|57P0[123]|53300)$/;
const PG_MESSAGES = /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|driver has already been destroyed/i;
const SQLITE_CODES = /^SQLITE_(BUSY|IOERR|FULL|READONLY|CANTOPEN|LOCKED)/;

export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (!(err instanceof Error) || depth > 4) return false;
  // by name too: Next bundles the route handlers with their own copy of this class
  if (err instanceof DatabaseUnavailableError || err.name === "DatabaseUnavailableError") return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (NETWORK_CODES.has(code) || PG_CODES.test(code) || SQLITE_CODES.test(code))) return true;
  if (PG_MESSAGES.test(err.message)) return true;
  // AggregateError (several addresses tried) and wrapped causes
  const inner = (err as { errors?: unknown[] }).errors;
  if (Array.isArray(inner) && inner.some((e) => isDatabaseUnreachable(e, depth + 1))) return true;
  return isDatabaseUnreachable((err as { cause?: unknown }).cause, depth + 1);
}

/** Any `scheme://user:password@` in a message loses its password. */
export function redactSecrets(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*):[^@\s]*@/gi, "$1@");
}

/** Why, in a few words, from the driver's error (bounded, no secrets). */
export function unreachableReason(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  const inner = (e as { errors?: unknown[] }).errors;
  const first = Array.isArray(inner) && inner[0] instanceof Error ? inner[0] : null;
  const text = (first ?? e).message || (e as { code?: string }).code || "no answer";
  return redactSecrets(text).slice(0, 300);
}

/** The sentence people see when a request needed the database and it is not there. */
export function unavailableSentence(dialect: "sqlite" | "postgres", err: unknown): string {
  const what = dialect === "postgres" ? "PostgreSQL" : "its SQLite file";
  return `The panel cannot reach its database (${what}) right now: ${unreachableReason(err)}. Sign-in, changes and actions are refused until it is back; try again in a moment.`;
}
