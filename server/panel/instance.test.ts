/**
 * Start-up of a panel: configuration from the environment, the one-time setup link, audit
 * retention at start.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditStore } from "../auth/audit";
import { UserStore } from "../auth/users";
import { openStore } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { loadPanelConfig, PanelConfigError } from "./config";
import { createPanel, type Panel } from "./instance";
import { SETUP_LINK_FILE } from "./setupLink";

const DAY = 24 * 60 * 60 * 1000;
const dirs: string[] = [];
const panels: Panel[] = [];
function dataDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), "gpudeck-instance-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const p of panels.splice(0)) await p.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// an agent nobody listens on: the watcher retries quietly in the background
const NO_AGENT = { GPUDECK_AGENT_URL: "http://127.0.0.1:9", GPUDECK_AGENT_TOKEN: "t".repeat(40) };

async function start(env: Record<string, string>, interactive = true): Promise<{ panel: Panel; logs: string[] }> {
  const logs: string[] = [];
  const panel = await createPanel(loadPanelConfig({ ...NO_AGENT, ...env }), { log: (m) => logs.push(m), panelUrl: "http://127.0.0.1:3999", interactive });
  panels.push(panel);
  return { panel, logs };
}

describe("panel start-up", () => {
  it("no admin yet: prints a one-time setup link (token in the #fragment) that the setup procedure accepts", async () => {
    const dir = dataDir();
    const { panel, logs } = await start({ GPUDECK_DATA_DIR: dir });
    const line = logs.find((l) => l.includes("/setup#token="))!;
    expect(line).toMatch(/^no admin account yet: create one within 1 h at http:\/\/127\.0\.0\.1:3999\/setup#token=[A-Za-z0-9_-]{43}$/);
    const token = line.split("#token=")[1]!;
    expect(await panel.auth.users.checkSetupToken(token)).toBe(true);
  });

  it("not on a terminal (the journal): the link goes to a 0600 file in the data dir, the log names the file, never the token", async () => {
    const dir = dataDir();
    const { panel, logs } = await start({ GPUDECK_DATA_DIR: dir }, false);
    const file = path.join(dir, SETUP_LINK_FILE);
    expect(logs.join("\n")).not.toMatch(/token=|[A-Za-z0-9_-]{43}/);
    expect(logs.join("\n")).toContain(`the one-time setup link (valid 1 h) is in ${file}, readable only by this user`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = /setup#token=([A-Za-z0-9_-]{43})\n$/.exec(readFileSync(file, "utf8"))![1]!;
    expect(await panel.auth.users.checkSetupToken(token)).toBe(true);
  });

  it("GPUDECK_PUBLIC_URL is the base of the setup link and turns on Secure cookies under https", async () => {
    const { panel, logs } = await start({ GPUDECK_DATA_DIR: dataDir(), GPUDECK_PUBLIC_URL: "https://gpudeck.example/" });
    expect(logs.join("\n")).toContain("https://gpudeck.example/setup#token=");
    expect(panel.config.secureCookies).toBe(true);
    expect(panel.config.allowedHosts).toContain("gpudeck.example");
    expect(panel.config.allowedOrigins).toContain("https://gpudeck.example");
  });

  it("with an admin, or in demo mode, no setup link", async () => {
    const dir = dataDir();
    const db = await openStore({ dataDir: dir });
    await new UserStore(fixedStore(db)).createUser({ username: "ada", password: "correct horse battery staple", role: "admin" });
    await db.close();
    expect((await start({ GPUDECK_DATA_DIR: dir })).logs.join("\n")).not.toContain("setup#token");
    expect((await start({ GPUDECK_DATA_DIR: dataDir(), GPUDECK_DEMO: "1" })).logs.join("\n")).not.toContain("setup#token");
  });

  it("prunes audit entries older than the retention at start", async () => {
    const dir = dataDir();
    const db = await openStore({ dataDir: dir });
    const audit = new AuditStore(fixedStore(db));
    const entry = { user: "ada", role: "admin", sourceAddr: null, host: "h", unit: "u.service", action: "restart", reason: null, outcome: "done" };
    await audit.recordAudit({ ...entry, at: Date.now() - 10 * DAY });
    const recent = await audit.recordAudit({ ...entry, at: Date.now() - 2 * DAY });
    await db.close();
    const { panel, logs } = await start({ GPUDECK_DATA_DIR: dir, GPUDECK_AUDIT_RETENTION_DAYS: "7" });
    expect((await panel.auth.audit.queryAudit({})).map((r) => r.id)).toEqual([recent]);
    expect(logs.join("\n")).toMatch(/audit retention: removed 1 entries older than 7 days/);
  });
});

describe("panel configuration", () => {
  it("defaults: 90-day audit retention, 60 s action guard, 12 h idle / 7 d sessions, no proxy", async () => {
    const c = loadPanelConfig({ GPUDECK_DATA_DIR: "/tmp/x", GPUDECK_AGENT_TOKEN: "t".repeat(40) });
    expect(c).toMatchObject({
      auditRetentionMs: 90 * DAY,
      actionGuardMs: 60_000,
      sessionIdleMs: 12 * 60 * 60 * 1000,
      sessionMaxMs: 7 * DAY,
      secureCookies: false,
      demo: false,
      operatorMayKill: false,
    });
    expect(c.proxy.enabled).toBe(false);
  });

  it("refuses a proxy header without trusted proxies, a bad role, a bad number", async () => {
    expect(() => loadPanelConfig({ GPUDECK_PROXY_AUTH_HEADER: "x-forwarded-user" })).toThrow(PanelConfigError);
    expect(() => loadPanelConfig({ GPUDECK_PROXY_AUTH_HEADER: "x-user", GPUDECK_TRUSTED_PROXIES: "10.0.0.1", GPUDECK_PROXY_DEFAULT_ROLE: "root" })).toThrow(
      /viewer, operator or admin/,
    );
    expect(() => loadPanelConfig({ GPUDECK_AUDIT_RETENTION_DAYS: "-1" })).toThrow(/positive number/);
    expect(() => loadPanelConfig({ GPUDECK_PUBLIC_URL: "not a url" })).toThrow(/not a URL/);
  });

  it("proxy mode: header name lower-cased, proxies parsed, unknown users refused unless a default role is set", async () => {
    const c = loadPanelConfig({
      GPUDECK_PROXY_AUTH_HEADER: "X-Auth-Request-User",
      GPUDECK_TRUSTED_PROXIES: "10.0.0.1, fd00::/8",
      GPUDECK_PROXY_SECRET: "s".repeat(32),
    });
    expect(c.proxy).toMatchObject({ enabled: true, header: "x-auth-request-user", trustedProxies: ["10.0.0.1", "fd00::/8"], defaultRole: null });
  });
});
