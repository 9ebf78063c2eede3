/**
 * The agent's bearer token: from GPUDECK_AGENT_TOKEN, from a file (--token-file,
 * GPUDECK_AGENT_TOKEN_FILE), or from `<data dir>/agent-token`, created on first start. Whatever the
 * source, a token shorter than 32 characters stops the agent with a message saying where it came
 * from (never the token). Comparison is the panel's own (server/auth/crypto.ts).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { agentTokenProblem } from "../contract/agentToken";
import { bearerToken, tokensEqual } from "../auth/crypto";
import { ConfigError } from "./config";

export const TOKEN_FILE = "agent-token";

/** Only ASCII whitespace around a token in a file is dropped (trim() would also eat U+00A0 and friends). */
function stripFileText(text: string): string {
  return text.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
}

/** Throws a ConfigError naming `source` when the token is not acceptable. */
export function checkAgentToken(token: string, source: string): string {
  const problem = agentTokenProblem(token);
  if (problem) throw new ConfigError(`${source}: ${problem}`);
  return token;
}

async function readTokenFile(file: string, hint: string): Promise<string> {
  const token = stripFileText(await readFile(file, "utf8"));
  const problem = agentTokenProblem(token);
  if (problem) throw new ConfigError(`the token file ${file}: ${problem}; ${hint}`);
  return token;
}

export async function loadOrCreateToken(dataDir: string, log: (m: string) => void): Promise<string> {
  const file = path.join(dataDir, TOKEN_FILE);
  const hint = "delete it to have a new one generated at the next start, or write a longer token into it";
  try {
    return await readTokenFile(file, hint);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString("base64url");
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" }).catch(async (err: NodeJS.ErrnoException) => {
    if (err.code !== "EEXIST") throw err;
  });
  log(`created a bearer token in ${file} (give it to the panel as GPUDECK_AGENT_TOKEN)`);
  return readTokenFile(file, hint);
}

/** The token the agent runs with, from its configuration (see the file comment). */
export async function resolveAgentToken(
  config: { token: string | null; tokenFile?: string | null; dataDir: string },
  log: (m: string) => void,
): Promise<string> {
  if (config.token !== null) return checkAgentToken(config.token, "GPUDECK_AGENT_TOKEN");
  if (config.tokenFile) {
    try {
      return await readTokenFile(config.tokenFile, "write a token of at least 32 characters into it (e.g. openssl rand -base64 32)");
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError(`cannot read the token file ${config.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
  return loadOrCreateToken(config.dataDir, log);
}

/** Constant-time comparison of `Authorization: Bearer <token>` with the expected token (never true for an empty one). */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  return tokensEqual(bearerToken(header), expected);
}
