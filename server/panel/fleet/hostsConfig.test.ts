import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hostNameFrom, loadHostsFromEnv, parseAgentsFile } from "./hostsConfig";

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-hosts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FILE = path.join(dir, "agents.json");
const parse = (value: unknown) => parseAgentsFile(JSON.stringify(value), FILE);
// agent tokens are at least 32 characters
const TOK_A = "tok-a-0123456789abcdefghijklmnopqrstuv";
const TOK_B = "tok-b-0123456789abcdefghijklmnopqrstuv";

describe("GPUDECK_AGENTS_FILE", () => {
  it("reads each agent with an inline token or a token file (relative to the file)", () => {
    writeFileSync(path.join(dir, "gpu-b.token"), `${TOK_B}\n`);
    const hosts = parse([
      { name: "gpu-a", url: "http://10.0.0.5:9300/", token: TOK_A, insecureHttp: true },
      { name: "gpu-b", url: "https://10.0.0.6:9300", tokenFile: "gpu-b.token" },
    ]);
    expect(hosts).toEqual([
      {
        name: "gpu-a",
        url: "http://10.0.0.5:9300",
        token: TOK_A,
        tokenSource: `the "token" of entry 1 ("gpu-a") in ${FILE}`,
        source: "file",
        tls: null,
        insecureHttp: true,
      },
      { name: "gpu-b", url: "https://10.0.0.6:9300", token: TOK_B, tokenSource: path.join(dir, "gpu-b.token"), source: "file", tls: null, insecureHttp: false },
    ]);
  });

  it("refuses plain http to an agent off loopback unless insecureHttp says it is meant", () => {
    expect(() => parse([{ name: "gpu-a", url: "http://10.0.0.5:9300", token: TOK_A }])).toThrow(
      /entry 1 \("gpu-a"\): http:\/\/10\.0\.0\.5:9300 is plain HTTP to an agent that is not on this machine.*Use https:\/\/.*insecure_http = true/,
    );
    expect(parse([{ name: "gpu-a", url: "http://127.0.0.1:9300", token: TOK_A }])[0]!.insecureHttp).toBe(false);
    expect(() => loadHostsFromEnv({ GPUDECK_AGENT_URL: "http://10.1.2.3:9300", GPUDECK_AGENT_TOKEN: TOK_A }, dir)).toThrow(/GPUDECK_AGENT_URL: .*plain HTTP/);
  });

  it.each([
    [[{ name: "GPU_A", url: "http://x:1", token: TOK_A }], /entry 1 \("GPU_A"\): key "name": host name may only contain lower-case/],
    [[{ name: "a", url: "ftp://x", token: "t" }], /entry 1 \("a"\): key "url": url must start with http/],
    [[{ name: "a", url: "http://u:p@x:1", token: "t" }], /key "url": url must not carry a user or password/],
    [[{ name: "a", url: "http://x:1" }], /entry 1 \("a"\): key "tokenFile" \(or "token"\) is missing/],
    [[{ name: "a", url: "http://x:1", token: "t", tokenFile: "f" }], /give "token" or "tokenFile", not both/],
    [[{ name: "a", url: "http://x:1", tokne: "t" }], /key "tokne"/],
    [[{ name: "a", url: "http://x:1", tokenFile: "missing.token" }], /cannot read tokenFile .*missing\.token: ENOENT/],
    [
      [
        { name: "a", url: "http://x:1", token: TOK_A, insecureHttp: true },
        { name: "a", url: "http://y:1", token: TOK_B },
      ],
      /entry 2 \("a"\): key "name": "a" is used by an earlier entry/,
    ],
    [{ name: "a" }, /must hold a JSON list of agents/],
  ])("refuses %j, naming the entry and the key", (value, message) => {
    expect(() => parse(value)).toThrow(message);
  });

  it("says where invalid JSON is", () => {
    writeFileSync(path.join(dir, "short.token"), "too-short\n");
    expect(() => parseAgentsFile("[{", FILE)).toThrow(/is not valid JSON/);
  });

  it("cannot be combined with GPUDECK_AGENT_URL", () => {
    writeFileSync(FILE, "[]");
    expect(() => loadHostsFromEnv({ GPUDECK_AGENTS_FILE: FILE, GPUDECK_AGENT_URL: "http://x:1" }, dir)).toThrow(/not both/);
  });
});

describe("GPUDECK_AGENT_URL (one host)", () => {
  it("is named GPUDECK_AGENT_NAME, or after the agent's address (this machine for loopback)", () => {
    expect(loadHostsFromEnv({ GPUDECK_AGENT_URL: "http://10.1.2.3:9300", GPUDECK_AGENT_TOKEN: TOK_A, GPUDECK_AGENT_INSECURE_HTTP: "1" }, dir)[0]).toMatchObject(
      {
        name: "10-1-2-3",
        token: TOK_A,
        source: "env",
      },
    );
    expect(loadHostsFromEnv({ GPUDECK_AGENT_URL: "http://127.0.0.1:9300", GPUDECK_AGENT_NAME: "gpu-x" }, dir)[0]!.name).toBe("gpu-x");
    expect(() => loadHostsFromEnv({ GPUDECK_AGENT_NAME: "Not OK" }, dir)).toThrow(/GPUDECK_AGENT_NAME: host name may only contain/);
  });

  it("reads the local agent's token file when no token is given", () => {
    writeFileSync(path.join(dir, "agent-token"), `${TOK_A}\n`);
    expect(loadHostsFromEnv({}, dir)[0]).toMatchObject({ url: "http://127.0.0.1:9300", token: TOK_A, tokenSource: path.join(dir, "agent-token") });
  });

  it("refuses a token shorter than 32 characters, empty, or set but blank, saying where it came from", () => {
    expect(() => loadHostsFromEnv({ GPUDECK_AGENT_TOKEN: "tok" }, dir)).toThrow(/GPUDECK_AGENT_TOKEN: the token is 3 characters long; at least 32/);
    expect(() => loadHostsFromEnv({ GPUDECK_AGENT_TOKEN: "" }, dir)).toThrow(/GPUDECK_AGENT_TOKEN: the token is empty \(it is set but empty/);
    const own = mkdtempSync(path.join(tmpdir(), "gpudeck-hosts-short-"));
    try {
      writeFileSync(path.join(own, "agent-token"), "\n");
      expect(() => loadHostsFromEnv({}, own)).toThrow(/the agent token file .*agent-token: the token is empty/);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("turns any text into a DNS label", () => {
    expect(hostNameFrom("GPU_Node.7")).toBe("gpu-node-7");
    expect(hostNameFrom("---")).toBe("local");
    expect(hostNameFrom("x".repeat(80))).toHaveLength(63);
  });
});
