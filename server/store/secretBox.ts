/**
 * Secrets the panel must send (agent tokens of hosts added on the Hosts page, alert channels'
 * URLs, ntfy tokens and SMTP passwords) are kept in the database encrypted with AES-256-GCM, under
 * a key that is not in the database: `GPUDECK_SECRET_KEY` (32 bytes, base64 or hex) or the file
 * `<data dir>/secret-key`, made at first start with mode 0600. A copy of the database alone (a
 * backup, a dump, a replica's disk) then holds no usable secret; a backup must hold the key too.
 *
 * A sealed value is `gdsec1.<key id>.<base64url of iv | tag | ciphertext>`, bound to where it is
 * stored (the table, column and row), so one row's ciphertext cannot be moved to another. The key
 * id (the first 8 hex digits of the key's SHA-256) lets a panel with another key say so.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import path from "node:path";

export const SECRET_KEY_FILE = "secret-key";
const PREFIX = "gdsec1";

export class SecretKeyError extends Error {}

export interface SecretBox {
  /** the first 8 hex digits of the key's SHA-256 (names a key, never reveals it) */
  readonly keyId: string;
  /** where the key came from, for messages */
  readonly source: string;
  /** `context`: where the value is stored, e.g. "hosts.token/gpu-a" */
  seal(plain: string, context: string): string;
  /** A sealed value's text; a value stored before encryption (no prefix) comes back as it is. */
  open(stored: string, context: string): string;
  isSealed(stored: string): boolean;
}

function keyFrom(text: string, what: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, "hex") : /^[A-Za-z0-9+/_-]{43}=?$/.test(t) ? Buffer.from(t, "base64") : null;
  if (key?.length !== 32) throw new SecretKeyError(`${what} must be 32 random bytes in base64 or hex (make one with: openssl rand -base64 32)`);
  return key;
}

export function secretBoxFromKey(key: Buffer, source: string): SecretBox {
  const keyId = createHash("sha256").update(key).digest("hex").slice(0, 8);
  const isSealed = (stored: string) => stored.startsWith(`${PREFIX}.`);
  return {
    keyId,
    source,
    isSealed,
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${PREFIX}.${keyId}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
    },
    open(stored, context) {
      if (!isSealed(stored)) return stored;
      const [, id, data] = stored.split(".");
      if (id !== keyId)
        throw new SecretKeyError(
          `${context} was encrypted with secret key ${id}, but this panel's key (${source}) is ${keyId}: ` +
            "give every panel the same GPUDECK_SECRET_KEY or <data dir>/secret-key (restore the key that belongs to this database)",
        );
      const raw = Buffer.from(data ?? "", "base64url");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
        decipher.setAAD(Buffer.from(context, "utf8"));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      } catch {
        throw new SecretKeyError(`${context} cannot be decrypted (altered, or moved from another row); set it again`);
      }
    },
  };
}

/**
 * The panel's box: GPUDECK_SECRET_KEY when given, else `<dataDir>/secret-key` (made now, mode
 * 0600, when missing; refused when others may read it).
 */
export function loadSecretBox(options: { dataDir: string; secretKey?: string | null }): SecretBox {
  if (options.secretKey?.trim()) return secretBoxFromKey(keyFrom(options.secretKey, "GPUDECK_SECRET_KEY"), "GPUDECK_SECRET_KEY");
  const file = path.join(/*turbopackIgnore: true*/ options.dataDir, SECRET_KEY_FILE);
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  try {
    // wx: two processes starting together (the panel and the CLI) make one key, the other reads it
    const fd = openSync(file, "wx", 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString("base64")}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new SecretKeyError(`cannot make the secret key file ${file}: ${(err as Error).message}`);
  }
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o077) throw new SecretKeyError(`the secret key file ${file} may be read by others (mode ${mode.toString(8)}): chmod 600 ${file}`);
  return secretBoxFromKey(keyFrom(readFileSync(file, "utf8"), `the secret key file ${file}`), file);
}
