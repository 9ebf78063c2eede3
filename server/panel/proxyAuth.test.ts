/** Trusted reverse-proxy sign-in through the panel's real endpoint: a shared secret, exact names, the loopback warning. */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "./context";
import { loadPanelConfig } from "./config";
import { addUser, call, startTestPanel, type TestPanel } from "./panelTestHarness";

const SECRET = "proxy-secret-0123456789abcdefghijklmnop";
const NO_AGENT = { url: "http://127.0.0.1:9", token: "unused-token-0123456789abcdefghijklmnopq" };
const me = async (tp: TestPanel, headers: Record<string, string>) =>
  (
    (await call(tp.panel, "session.me", { method: "GET", headers: { [PEER_HEADER]: "127.0.0.1", ...headers } })).json?.result?.data as {
      user: { name: string } | null;
    }
  ).user;

describe("proxy sign-in from loopback with a shared secret", () => {
  let tp: TestPanel;
  const logs: string[] = [];
  beforeAll(async () => {
    tp = await startTestPanel(NO_AGENT, {
      env: { GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user", GPUDECK_TRUSTED_PROXIES: "127.0.0.1", GPUDECK_PROXY_SECRET: SECRET },
      panel: { log: (m) => logs.push(m) },
    });
    await addUser(tp.panel, "ada", "admin");
  });
  afterAll(async () => tp?.close());

  it("a local process naming the admin without the secret is refused and audited", async () => {
    const r = await call(tp.panel, "units.restart", {
      input: { host: "test-host", name: "vllm-embed-small.service" },
      headers: { [PEER_HEADER]: "127.0.0.1", "x-forwarded-user": "ada" },
    });
    expect(r.status).toBe(401);
    expect(r.json?.error?.message).toMatch(/without the proxy's secret/);
    expect((await tp.panel.auth.audit.queryAudit({ action: "proxy-login", limit: 1 }))[0]).toMatchObject({ outcome: "refused", sourceAddr: "127.0.0.1" });
  });

  it("the proxy, sending the secret, signs people in; exact names only", async () => {
    expect(await me(tp, { "x-forwarded-user": "ada", "x-gpudeck-proxy-secret": SECRET })).toMatchObject({ name: "ada" });
    expect(await me(tp, { "x-forwarded-user": "ada", "x-gpudeck-proxy-secret": "wrong-secret-0123456789abcdefghijklmnop" })).toBeNull();
    expect(await me(tp, { "x-forwarded-user": "ADA", "x-gpudeck-proxy-secret": SECRET })).toBeNull();
  });

  it("no warning when a secret is set", async () => {
    expect(logs.join("\n")).not.toMatch(/WARNING/);
  });
});

describe("proxy configuration", () => {
  it("warns loudly at start when loopback is trusted without a secret", async () => {
    const logs: string[] = [];
    const tp = await startTestPanel(NO_AGENT, {
      env: { GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user", GPUDECK_TRUSTED_PROXIES: "127.0.0.1" },
      panel: { log: (m) => logs.push(m) },
    });
    await tp.close();
    expect(logs.join("\n")).toMatch(/WARNING: GPUDECK_TRUSTED_PROXIES trusts loopback: ANY process on this machine/);
  });

  it("refuses a short secret, or both forms at once", async () => {
    expect(() => loadPanelConfig({ GPUDECK_DATA_DIR: "/tmp/x", GPUDECK_AGENT_TOKEN: "t".repeat(40), GPUDECK_PROXY_SECRET: "short" })).toThrow(
      /GPUDECK_PROXY_SECRET: the proxy secret must be at least 32/,
    );
    expect(() =>
      loadPanelConfig({ GPUDECK_DATA_DIR: "/tmp/x", GPUDECK_AGENT_TOKEN: "t".repeat(40), GPUDECK_PROXY_SECRET: SECRET, GPUDECK_PROXY_SECRET_FILE: "/x" }),
    ).toThrow(/not both/);
    expect(() =>
      loadPanelConfig({ GPUDECK_DATA_DIR: "/tmp/x", GPUDECK_AGENT_TOKEN: "t".repeat(40), GPUDECK_PROXY_SECRET_FILE: "/nonexistent/secret" }),
    ).toThrow(/cannot read GPUDECK_PROXY_SECRET_FILE/);
  });
});

describe("a trusted range without a secret", () => {
  const base = { GPUDECK_DATA_DIR: "/tmp/x", GPUDECK_AGENT_TOKEN: "t".repeat(40), GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user" };
  const bothNamed = /GPUDECK_TRUSTED_PROXIES[^]*GPUDECK_PROXY_SECRET/;

  it("is refused: anyone in the range could name any user", () => {
    for (const range of ["10.0.0.0/8", "10.20.30.40, 192.168.1.0/24", "fd00::/8", "0.0.0.0/0"]) {
      expect(() => loadPanelConfig({ ...base, GPUDECK_TRUSTED_PROXIES: range }), range).toThrow(bothNamed);
    }
  });

  it("a single address stays allowed (also as /32 or /128), and a range with the secret", () => {
    for (const one of ["10.20.30.40", "10.20.30.40/32", "fd00::1/128", "::1"]) {
      expect(loadPanelConfig({ ...base, GPUDECK_TRUSTED_PROXIES: one }).proxy.trustedProxies, one).toEqual([one]);
    }
    expect(loadPanelConfig({ ...base, GPUDECK_TRUSTED_PROXIES: "10.0.0.0/8", GPUDECK_PROXY_SECRET: SECRET }).proxy.secret).toBe(SECRET);
    // without proxy sign-in a range only says whose X-Forwarded-For to read
    expect(loadPanelConfig({ ...base, GPUDECK_PROXY_AUTH_HEADER: undefined, GPUDECK_TRUSTED_PROXIES: "10.0.0.0/8" }).proxy.enabled).toBe(false);
  });

  it("the panel process exits non-zero at start, naming both variables", async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(
        "node_modules/.bin/tsx",
        ["server/panel/serve.ts"],
        {
          env: { PATH: process.env.PATH, ...base, GPUDECK_TRUSTED_PROXIES: "10.0.0.0/8", PORT: "9", NODE_ENV: "production" } as NodeJS.ProcessEnv,
          timeout: 30_000,
        },
        (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stderr }),
      );
    });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/configuration error: /);
    expect(stderr).toMatch(bothNamed);
  }, 40_000);
});
