/**
 * An agent serving HTTPS (its own self-signed certificate, made with openssl), and panels that
 * verify it with a CA file or a pinned fingerprint, or refuse it. Real agent, real panel, real TLS.
 */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentConfig } from "../agent/config";
import { startAgent, type RunningAgent } from "../agent/main";
import { parseAgentsFile } from "./fleet/hostsConfig";
import { addUser, call, login, startTestPanel, type TestPanel } from "./panelTestHarness";

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-tls-"));
const TOKEN = "tls-agent-token-0123456789abcdefghijklmn";
const cert = path.join(dir, "agent.crt");
const key = path.join(dir, "agent.key");
const other = path.join(dir, "other.crt");
let fingerprint = "";
let agent: RunningAgent;

function selfSigned(certFile: string, keyFile: string): void {
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=gpudeck-agent"].concat([
      "-addext",
      "subjectAltName=IP:127.0.0.1",
      "-keyout",
      keyFile,
      "-out",
      certFile,
    ]),
    { stdio: "ignore" },
  );
}

beforeAll(async () => {
  selfSigned(cert, key);
  selfSigned(other, path.join(dir, "other.key"));
  fingerprint = new X509Certificate(readFileSync(cert)).fingerprint256;
  process.env.GPUDECK_SIM_SPEED ??= "20";
  agent = await startAgent({
    host: "127.0.0.1",
    port: 0,
    token: TOKEN,
    unitGlobs: ["vllm-*.service"],
    nvidiaSmiPath: "nvidia-smi",
    dataDir: dir,
    simulate: true,
    gpuIntervalMs: 500,
    tls: { certFile: cert, keyFile: key },
  });
}, 30_000);
afterAll(async () => {
  await agent?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A panel watching the agent as the agents file says (one entry, name "gpu-a"). */
async function panelWith(entry: Record<string, string>): Promise<{ tp: TestPanel; cookie: string }> {
  const file = path.join(dir, `agents-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify([{ name: "gpu-a", url: agent.url, token: TOKEN, ...entry }]));
  const tp = await startTestPanel(agent, { env: { GPUDECK_AGENTS_FILE: file, GPUDECK_AGENT_URL: "", GPUDECK_AGENT_NAME: "" } });
  await addUser(tp.panel, "ada", "admin");
  return { tp, cookie: await login(tp.panel, "ada") };
}

describe("an agent serving HTTPS", () => {
  it("says so in its URL", async () => {
    expect(agent.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it.each([
    ["its CA file", () => ({ caFile: cert })],
    ["its pinned fingerprint", () => ({ fingerprint })],
    ["both", () => ({ caFile: cert, fingerprint: fingerprint.replace(/:/g, "").toLowerCase() })],
  ])("a panel verifying it with %s connects, calls and streams", async (_label, entry) => {
    const { tp, cookie } = await panelWith(entry());
    try {
      await expect.poll(() => tp.panel.fleet.get("gpu-a")?.state, { timeout: 10_000 }).toBe("connected");
      const r = await call(tp.panel, "host.status", { method: "GET", input: { host: "gpu-a" }, cookie });
      expect(r.status, r.text).toBe(200);
    } finally {
      await tp.close();
    }
  });

  it.each([
    ["no CA and no pin (a self-signed certificate)", () => ({}), /self[- ]signed certificate/i],
    ["another CA", () => ({ caFile: other }), /self[- ]signed certificate|unable to verify|certificate/i],
    ["a wrong pin", () => ({ fingerprint: "AB:".repeat(31) + "AB" }), /is not the pinned one/],
  ])("a panel with %s refuses it, saying why", async (_label, entry, message) => {
    const { tp, cookie } = await panelWith(entry());
    try {
      await expect.poll(() => tp.panel.fleet.get("gpu-a")?.error ?? "", { timeout: 10_000 }).toMatch(message);
      const r = await call(tp.panel, "host.status", { method: "GET", input: { host: "gpu-a" }, cookie });
      expect(r.status).toBe(503);
      expect(r.text).toMatch(message);
      expect(r.text).not.toContain(TOKEN);
    } finally {
      await tp.close();
    }
  });
});

describe("TLS configuration", () => {
  it("the agent needs both files", async () => {
    expect(() => loadAgentConfig(["--tls-cert", cert], {})).toThrow(/needs both GPUDECK_AGENT_TLS_CERT .* and GPUDECK_AGENT_TLS_KEY/);
    expect(loadAgentConfig([], { GPUDECK_AGENT_TLS_CERT: cert, GPUDECK_AGENT_TLS_KEY: key }).tls).toEqual({ certFile: cert, keyFile: key });
  });

  it("the agents file: caFile and fingerprint only for https, readable, well-formed", async () => {
    const parse = (entry: Record<string, string>) => parseAgentsFile(JSON.stringify([{ name: "a", token: TOKEN, ...entry }]), path.join(dir, "x.json"));
    expect(() => parse({ url: "http://127.0.0.1:9300", fingerprint })).toThrow(/needs an https:\/\/ url/);
    expect(() => parse({ url: "https://10.0.0.1:9300", caFile: "missing.pem" })).toThrow(/cannot read caFile .*missing\.pem: ENOENT/);
    expect(() => parse({ url: "https://10.0.0.1:9300", caFile: key })).toThrow(/holds no PEM certificate/);
    expect(() => parse({ url: "https://10.0.0.1:9300", fingerprint: "12:34" })).toThrow(/not a SHA-256 fingerprint/);
    expect(parse({ url: "https://10.0.0.1:9300", fingerprint: `SHA256 Fingerprint=${fingerprint}` })[0]!.tls).toEqual({ ca: null, fingerprint });
  });
});
