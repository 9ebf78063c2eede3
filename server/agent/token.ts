/** The agent's bearer token: from configuration, or a file created on first start. */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

export const TOKEN_FILE = "agent-token";

export async function loadOrCreateToken(dataDir: string, log: (m: string) => void): Promise<string> {
  const file = path.join(dataDir, TOKEN_FILE);
  try {
    const token = (await readFile(file, "utf8")).trim();
    if (token.length >= 32) return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString("base64url");
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST") throw err;
  });
  log(`created a bearer token in ${file} (give it to the panel as GPUDECK_AGENT_TOKEN)`);
  return (await readFile(file, "utf8")).trim();
}

/** Constant-time comparison of `Authorization: Bearer <token>` with the expected token. */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  if (!header || !header.startsWith("Bearer ")) return false;
  const given = createHash("sha256").update(header.slice(7).trim()).digest();
  const want = createHash("sha256").update(expected).digest();
  return timingSafeEqual(given, want);
}
