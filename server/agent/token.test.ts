import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addHostInput } from "../contract/schemas";
import { ConfigError, loadAgentConfig } from "./config";
import { startAgent } from "./main";
import { bearerMatches, resolveAgentToken, TOKEN_FILE } from "./token";

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-token-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = () => undefined;
const GOOD = "a-token-of-forty-characters-0123456789ab";

function ownDir(): string {
  return mkdtempSync(path.join(dir, "d-"));
}

describe("the agent refuses a token shorter than 32 characters", () => {
  it("GPUDECK_AGENT_TOKEN set but empty is refused, not used as the token", () => {
    expect(() => loadAgentConfig([], { GPUDECK_AGENT_TOKEN: "" })).toThrow(ConfigError);
    expect(() => loadAgentConfig([], { GPUDECK_AGENT_TOKEN: "" })).toThrow(/GPUDECK_AGENT_TOKEN: the token is empty \(it is set but empty/);
  });

  it("a short token from the environment is refused", () => {
    expect(() => loadAgentConfig([], { GPUDECK_AGENT_TOKEN: "secret" })).toThrow(/the token is 6 characters long; at least 32/);
    expect(loadAgentConfig([], { GPUDECK_AGENT_TOKEN: GOOD }).token).toBe(GOOD);
  });

  it("--token is refused: argv shows in ps", () => {
    expect(() => loadAgentConfig(["--token", GOOD], {})).toThrow(/--token would show the token to every local user/);
  });

  it("a token file given with --token-file is read, and a short one refused", async () => {
    const d = ownDir();
    const file = path.join(d, "tok");
    writeFileSync(file, `${GOOD}\n`);
    const config = loadAgentConfig(["--token-file", file, "--data-dir", d], {});
    expect(await resolveAgentToken(config, quiet)).toBe(GOOD);
    writeFileSync(file, "short\n");
    await expect(resolveAgentToken(config, quiet)).rejects.toThrow(/the token file .*tok: the token is 5 characters long/);
    await expect(resolveAgentToken({ ...config, tokenFile: path.join(d, "missing") }, quiet)).rejects.toThrow(/cannot read the token file .*missing: ENOENT/);
  });

  it("an existing short or empty token file in the data dir is refused, not used as is", async () => {
    for (const text of ["", "\n", "short-token\n", `${"x".repeat(31)}\n`]) {
      const d = ownDir();
      writeFileSync(path.join(d, TOKEN_FILE), text);
      chmodSync(path.join(d, TOKEN_FILE), 0o600);
      await expect(resolveAgentToken({ token: null, dataDir: d }, quiet)).rejects.toThrow(
        /the token file .*agent-token: the token is .*delete it to have a new one generated/,
      );
    }
  });

  it("a missing token file is created with 32 random bytes (base64url), mode 0600", async () => {
    const d = ownDir();
    const token = await resolveAgentToken({ token: null, dataDir: d }, quiet);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readFileSync(path.join(d, TOKEN_FILE), "utf8").trim()).toBe(token);
    expect(await resolveAgentToken({ token: null, dataDir: d }, quiet)).toBe(token);
  });

  it("startAgent itself refuses an empty or short token (programmatic callers too)", async () => {
    const base = { host: "127.0.0.1", port: 0, unitGlobs: [], nvidiaSmiPath: "nvidia-smi", dataDir: ownDir(), simulate: true, gpuIntervalMs: 1000 };
    await expect(startAgent({ ...base, token: "" })).rejects.toThrow(/the token is empty/);
    await expect(startAgent({ ...base, token: "short" })).rejects.toThrow(/at least 32/);
  });
});

describe("bearer comparison", () => {
  it("matches the exact token only", () => {
    expect(bearerMatches(`Bearer ${GOOD}`, GOOD)).toBe(true);
    expect(bearerMatches(`Bearer ${GOOD}x`, GOOD)).toBe(false);
    expect(bearerMatches(undefined, GOOD)).toBe(false);
    expect(bearerMatches(`Basic ${GOOD}`, GOOD)).toBe(false);
  });

  it("an empty expected token never matches, whatever the header (no-break space, empty, blank)", () => {
    for (const header of ["Bearer ", "Bearer \u00a0", "Bearer \u2003", "Bearer  ", "Bearer"]) expect(bearerMatches(header, "")).toBe(false);
  });

  it("whitespace JavaScript trims is not ignored around a token", () => {
    expect(bearerMatches(`Bearer ${GOOD}\u00a0`, GOOD)).toBe(false);
    expect(bearerMatches(`Bearer \u00a0${GOOD}`, GOOD)).toBe(false);
  });
});

describe("tokens the panel is given on the Hosts page", () => {
  it("must be at least 32 characters", () => {
    const r = addHostInput.safeParse({ name: "gpu-a", url: "http://10.0.0.5:9300", token: "short" });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/token is 5 characters long; at least 32/);
    expect(addHostInput.safeParse({ name: "gpu-a", url: "http://10.0.0.5:9300", token: ` ${GOOD}\n` }).data?.token).toBe(GOOD);
    expect(addHostInput.safeParse({ name: "gpu-a", url: "http://10.0.0.5:9300", token: `${"x".repeat(40)}\u00a0` }).success).toBe(false);
  });
});
