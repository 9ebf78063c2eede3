/**
 * Hostile input about secrets and where the panel sends requests, through the panel's real API
 * endpoint in front of a real agent on a simulated host: a stored agent token, ntfy token or SMTP
 * password never follows a URL an admin points elsewhere, and each refusal says what to do.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { ChannelView } from "../contract/alerts";
import { addUser, call, login, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "./panelTestHarness";

let agent: RunningAgent;
let tp: TestPanel;
let ada: string;
/** a listener that records every Authorization header it is sent (where a moved token would go) */
const seen: string[] = [];
let trap: http.Server;
let trapUrl: string;

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "ada", "admin");
  ada = await login(tp.panel, "ada");
  trap = http.createServer((req, res) => {
    seen.push(String(req.headers.authorization ?? ""));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => trap.listen(0, "127.0.0.1", () => r()));
  trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
  await new Promise((r) => trap?.close(r));
});

const mutate = (path: string, input: unknown) => call(tp.panel, path, { input, cookie: ada });
const message = (r: RpcResult) => r.json?.error?.message ?? r.text;
const data = <T>(r: RpcResult) => {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
};

describe("a stored secret does not follow a changed URL", () => {
  it("hosts.update to another origin without the token is refused, and the token goes nowhere", async () => {
    expect((await mutate("hosts.add", { name: "gpu-moved", url: agent.url, token: agent.token })).status).toBe(200);
    const r = await mutate("hosts.update", { name: "gpu-moved", url: `${trapUrl}/` });
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(/^The new url goes to http:\/\/127\.0\.0\.1:\d+, not http:\/\/127\.0\.0\.1:\d+: give the agent token again \(token\)/);
    await new Promise((res) => setTimeout(res, 300));
    expect(seen.filter((h) => h.includes(agent.token))).toEqual([]);
    const row = (await tp.panel.auth.audit.queryAudit({ action: "host.update", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "ada", outcome: "refused" });
  });

  it("the same origin keeps the token; a new origin with the token given is accepted", async () => {
    expect((await mutate("hosts.update", { name: "gpu-moved", url: `${agent.url}/` })).status).toBe(200);
    const other = "0123456789abcdefghijklmnopqrstuvwxyz-other";
    expect((await mutate("hosts.update", { name: "gpu-moved", url: trapUrl, token: other })).status).toBe(200);
    await expect.poll(() => seen.some((h) => h === `Bearer ${other}`), { timeout: 5000 }).toBe(true);
    expect(seen.filter((h) => h.includes(agent.token))).toEqual([]);
  });

  it("an ntfy channel moved to another origin needs its token again (or token: null)", async () => {
    const ch = data<ChannelView>(
      await mutate("alerts.channels.add", { type: "ntfy", name: "pager", url: "https://ntfy.example/alerts", token: "tk_secret_0123456789" }),
    );
    const r = await mutate("alerts.channels.update", { id: ch.id, url: "https://ntfy.attacker.example/alerts" });
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(/goes to https:\/\/ntfy\.attacker\.example, not https:\/\/ntfy\.example: give the ntfy token again/);
    expect((await mutate("alerts.channels.update", { id: ch.id, url: "https://ntfy.example/other-topic" })).status).toBe(200);
    const moved = data<ChannelView>(await mutate("alerts.channels.update", { id: ch.id, url: "https://ntfy.other.example/a", token: null }));
    expect(moved.tokenHint).toBeNull();
  });

  it("an email channel moved to another mail server needs its password again", async () => {
    const ch = data<ChannelView>(
      await mutate("alerts.channels.add", {
        type: "email",
        name: "mail",
        url: "smtps://mail.example:465",
        from: "gpudeck@example.com",
        to: ["oncall@example.com"],
        username: "gpudeck",
        password: "mail-pass-0123456789",
      }),
    );
    const r = await mutate("alerts.channels.update", { id: ch.id, url: "smtp://mail.attacker.example:587" });
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(/give the SMTP password again/);
    expect((await mutate("alerts.channels.update", { id: ch.id, url: "smtp://mail.attacker.example:587", password: "another-pass-123" })).status).toBe(200);
  });
});

describe("requests to link-local and cloud metadata addresses", () => {
  const cases: [string, string, unknown, RegExp][] = [
    [
      "an agent on the metadata address",
      "hosts.add",
      { name: "gpu-meta", url: "http://169.254.169.254:9300", token: "t".repeat(40) },
      /169\.254\.169\.254, a link-local address/,
    ],
    ["an agent on AWS's IPv6 metadata address", "hosts.add", { name: "gpu-meta6", url: "http://[fd00:ec2::254]:9300", token: "t".repeat(40) }, /AWS metadata/],
    [
      "a webhook to the metadata service",
      "alerts.channels.add",
      { type: "webhook", name: "meta", url: "http://169.254.169.254/latest/meta-data/" },
      /link-local/,
    ],
    ["a Slack hook on a link-local IPv6 address", "alerts.channels.add", { type: "slack", name: "ll", url: "http://[fe80::1]/hook" }, /IPv6 link-local/],
    ["ntfy on Alibaba's metadata address", "alerts.channels.add", { type: "ntfy", name: "ali", url: "http://100.100.100.200/topic" }, /Alibaba/],
  ];
  for (const [what, path, input, why] of cases)
    it(`refused when saved: ${what}`, async () => {
      const r = await mutate(path, input);
      expect(r.status).toBe(400);
      expect(message(r)).toMatch(why);
      expect(message(r)).toMatch(/GPUDECK_EGRESS_ALLOW/);
    });

  it("a host moved onto the metadata address is refused too", async () => {
    const r = await mutate("hosts.update", { name: "gpu-moved", url: "http://169.254.169.254:9300", token: "t".repeat(40) });
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(/^Not an agent address the panel connects to: 169\.254\.169\.254/);
  });
});

describe("plain http to an agent off loopback, and https with a CA or pin", () => {
  const TOK = "t".repeat(40);
  it("plain http off loopback is refused with a sentence naming https and insecure_http", async () => {
    const r = await mutate("hosts.add", { name: "gpu-plain", url: "http://10.9.9.9:9300", token: TOK });
    expect(r.status).toBe(400);
    expect(message(r)).toMatch(/is plain HTTP to an agent that is not on this machine.*Use https:\/\/.*insecure_http = true.*insecureHttp: true/);
  });

  it("insecureHttp: true is accepted and shown as such; loopback needs nothing", async () => {
    expect((await mutate("hosts.add", { name: "gpu-plain", url: "http://10.9.9.9:9300", token: TOK, insecureHttp: true })).status).toBe(200);
    const list = data<{ name: string; insecureHttp: boolean }[]>(await call(tp.panel, "hosts.list", { method: "GET", cookie: ada }));
    expect(list.find((h) => h.name === "gpu-plain")?.insecureHttp).toBe(true);
    expect(list.find((h) => h.name === "gpu-moved")?.insecureHttp).toBe(false);
    // turning it off again for a plain-http host is refused the same way
    expect(message(await mutate("hosts.update", { name: "gpu-plain", insecureHttp: false }))).toMatch(/plain HTTP/);
  });

  it("a CA or pin needs https; a bad fingerprint is named; a good one is stored and used", async () => {
    expect(message(await mutate("hosts.add", { name: "gpu-tls", url: "http://127.0.0.1:9", token: TOK, fingerprint: "ab".repeat(32) }))).toMatch(
      /needs an https:\/\/ url/,
    );
    expect(message(await mutate("hosts.add", { name: "gpu-tls", url: "https://10.9.9.8:9300", token: TOK, fingerprint: "nope" }))).toMatch(
      /not a SHA-256 fingerprint/,
    );
    expect(message(await mutate("hosts.add", { name: "gpu-tls", url: "https://10.9.9.8:9300", token: TOK, caPem: "not pem" }))).toMatch(
      /caPem holds no PEM certificate/,
    );
    expect((await mutate("hosts.add", { name: "gpu-tls", url: "https://10.9.9.8:9300", token: TOK, fingerprint: "ab".repeat(32) })).status).toBe(200);
    expect(tp.panel.services.fleet.get("gpu-tls")?.config.tls?.fingerprint).toBe(Array(32).fill("AB").join(":"));
    const stored = await tp.panel.services.hostStore.get("gpu-tls");
    expect(stored?.tls?.fingerprint).toBe(Array(32).fill("AB").join(":"));
  });
});
