/**
 * Hostile input against the panel's real API endpoint (the function the Next route handler
 * calls: request guard, bounded body, tRPC with the panel's context), in front of a real agent
 * on a simulated host. Every case must be refused with a clear error, must not reach systemd
 * (the agent records no action, the units get no job), and must leave a "refused"/"error" row
 * in the audit log naming the user when one is known.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { Panel } from "./instance";
import {
  addUser,
  call,
  login,
  ORIGIN,
  panelRequest,
  PASSWORD,
  send,
  startTestAgent,
  startTestPanel,
  type RequestOptions,
  type RpcResult,
  type TestPanel,
  HOST,
  hostConnected,
  openEventStream,
} from "./panelTestHarness";

const KIMI = "vllm-kimi-k25.service";
const EMBED = "vllm-embed-small.service";
const WATCHED = [KIMI, EMBED];

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const cookie: Record<string, string> = {};

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent);
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "vera", "viewer");
  await addUser(panel, "dora", "operator", ["vllm-*"]);
  await addUser(panel, "eve", "operator", ["vllm-*"]);
  for (const name of ["ada", "otto", "vera"]) cookie[name] = await login(panel, name);
  await hostConnected(panel);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

function messageOf(r: RpcResult): string {
  const j = r.json as unknown;
  if (Array.isArray(j)) return (j[0] as { error?: { message?: string } }).error?.message ?? r.text;
  return r.json?.error?.message ?? r.text;
}

async function lastAuditId(): Promise<number> {
  return (await panel.auth.audit.queryAudit({ limit: 1 }))[0]?.id ?? 0;
}

function jobCounts(): number[] {
  return WATCHED.map((u) => agent.hub.recentJobs(u, 10_000).length);
}

interface HostileCase {
  name: string;
  request: () => Request | Promise<Request>;
  status: number;
  message: RegExp;
  /** The user the audit row must name (null: nobody could be identified). */
  auditUser: string | null;
  auditAction?: string;
}

const as = (user: string) => cookie[user]!;
const restart =
  (user: string | null, input: unknown, extra: RequestOptions = {}) =>
  () =>
    panelRequest("units.restart", { input, cookie: user ? as(user) : null, ...extra });

const NAME_CASES: [string, unknown, RegExp][] = [
  ["--help", "--help", /must not start with '-'/],
  ["-H evil", "-H evil", /must not start with '-'/],
  ["-H evil.service", "-H evil.service", /must not start with '-'/],
  ["a;reboot", "a;reboot", /may only contain/],
  ["a;reboot.service", "a;reboot.service", /may only contain/],
  ["$(id)", "$(id)", /may only contain/],
  ["$(id).service", "$(id).service", /may only contain/],
  ["`id`.service", "`id`.service", /may only contain/],
  ["../x", "../x", /must not start with '\.'/],
  ["../x.service", "../x.service", /must not start with '\.'/],
  ["x/../../etc/passwd.service", "x/../../etc/passwd.service", /may only contain/],
  ["very long name", `${"a".repeat(300)}.service`, /longer than 255|256/],
  ["Cyrillic і look-alike", "vllm-kimi-k25.servіce", /may only contain ASCII/],
  ["Unicode hyphen look-alike", "vllm\u2010kimi-k25.service", /may only contain ASCII/],
  ["fullwidth letters", "ｖｌｌｍ-kimi-k25.service", /may only contain ASCII/],
  ["zero-width space", "vllm-kimi\u200b-k25.service", /may only contain ASCII/],
  ["empty", "", /empty/],
  ["blank", "   ", /may only contain/],
  ["trailing newline", `${KIMI}\n`, /may only contain/],
  ["NUL byte", `${KIMI}\u0000`, /may only contain/],
  ["space and flag", `${KIMI} --force`, /may only contain/],
  ["glob", "vllm-*.service", /may only contain/],
  ["unknown unit type", "vllm-kimi-k25.exe", /unknown unit type/],
  ["template instance that is an option", "vllm-kimi-k25@--help.service", /instance \(after '@'\) must not start with '-'/],
  ["template instance starting with '.'", "vllm-kimi-k25@..x.service", /must not contain '\.\.'|must not start with '\.'/],
  ["backslash that is no systemd escape", "vllm-kimi-k25@a\\b.service", /only as a systemd escape/],
  ["number instead of a name", 42, /string/i],
  ["array instead of a name", [KIMI], /string/i],
  ["object instead of a name", { toString: KIMI }, /string/i],
];

const CASES: HostileCase[] = [
  // --- unit names, as an admin (only the name can be the reason for a refusal) ---------------
  ...NAME_CASES.map(([label, name, message]): HostileCase => ({
    name: `unit name: ${label}`,
    request: restart("ada", { host: HOST, name }),
    status: 400,
    message,
    auditUser: "ada",
    auditAction: "restart",
  })),
  {
    name: "unit outside the agent's allow-list",
    request: restart("ada", { host: HOST, name: "sshd.service" }),
    status: 403,
    message: /not in this agent's allow-list/,
    auditUser: "ada",
    auditAction: "restart",
  },
  {
    name: "an instance through a glob that names no template (vllm-*.service)",
    request: restart("ada", { host: HOST, name: "vllm-kimi-k25@x.service" }),
    status: 403,
    message: /not in this agent's allow-list/,
    auditUser: "ada",
    auditAction: "restart",
  },
  {
    name: "operator's pattern vllm-embed-* does not cover an instance of vllm-embed-small@",
    request: restart("otto", { host: HOST, name: "vllm-embed-small@x.service" }),
    status: 403,
    message: /not in your units/,
    auditUser: "otto",
    auditAction: "restart",
  },
  {
    name: "systemd's own unit outside the allow-list (stop)",
    request: () => panelRequest("units.stop", { input: { host: HOST, name: "systemd-journald.service" }, cookie: as("ada") }),
    status: 403,
    message: /not in this agent's allow-list/,
    auditUser: "ada",
    auditAction: "stop",
  },
  {
    name: "extra input key",
    request: restart("ada", { host: HOST, name: KIMI, shell: "reboot" }),
    status: 400,
    message: /unrecognized key|shell/i,
    auditUser: "ada",
  },
  {
    name: "reason over 500 characters",
    request: restart("ada", { host: HOST, name: KIMI, reason: "x".repeat(600) }),
    status: 400,
    message: /reason is longer than 500/,
    auditUser: "ada",
  },
  { name: "reason not a string", request: restart("ada", { host: HOST, name: KIMI, reason: { $ne: 1 } }), status: 400, message: /reason/, auditUser: "ada" },
  {
    name: "confirmed not a boolean",
    request: restart("ada", { host: HOST, name: KIMI, confirmed: "yes" }),
    status: 400,
    message: /confirmed/,
    auditUser: "ada",
  },

  // --- secrets and agent tokens ------------------------------------------------------------------
  ...(["vera", "otto"] as const).map((user): HostileCase => ({
    name: `${user} reveals a unit's unmasked command lines`,
    request: () => panelRequest("reveal.unit", { input: { host: HOST, name: KIMI }, cookie: as(user) }),
    status: 403,
    message: /only admins can reveal command lines/,
    auditUser: user,
    auditAction: "unit.reveal",
  })),
  {
    name: "an admin adds a host with a short token",
    request: () => panelRequest("hosts.add", { input: { name: "gpu-z", url: "http://10.9.9.9:9300", token: "hunter2" }, cookie: as("ada") }),
    status: 400,
    message: /token is 7 characters long; at least 32/,
    auditUser: "ada",
    auditAction: "host.add",
  },
  {
    name: "an admin adds a host whose token hides a no-break space",
    request: () => panelRequest("hosts.add", { input: { name: "gpu-z", url: "http://10.9.9.9:9300", token: `${"t".repeat(40)}\u00a0` }, cookie: as("ada") }),
    status: 400,
    message: /token may only contain visible ASCII/,
    auditUser: "ada",
    auditAction: "host.add",
  },

  // --- bodies and content types -------------------------------------------------------------
  { name: "malformed JSON", request: restart("ada", undefined, { body: '{"name": "vllm-kimi' }), status: 400, message: /JSON|parse/i, auditUser: "ada" },
  { name: "JSON null body", request: restart("ada", undefined, { body: "null" }), status: 400, message: /object|expected/i, auditUser: "ada" },
  {
    name: "oversized body (Content-Length)",
    request: restart("ada", { host: HOST, name: KIMI, reason: "x".repeat(100_000) }),
    status: 413,
    message: /over 65536 bytes/,
    auditUser: "ada",
  },
  {
    name: "oversized chunked body (no Content-Length)",
    request: () => {
      const chunk = new TextEncoder().encode(" ".repeat(16 * 1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent++ < 8) ctl.enqueue(chunk);
          else ctl.close();
        },
      });
      return panelRequest("units.restart", { cookie: as("ada"), body });
    },
    status: 413,
    message: /over 65536 bytes/,
    auditUser: "ada",
  },
  {
    name: "form-urlencoded (a cross-site HTML form)",
    request: restart("ada", undefined, { contentType: "application/x-www-form-urlencoded", body: `name=${KIMI}` }),
    status: 415,
    message: /Only application\/json/,
    auditUser: "ada",
  },
  {
    name: "multipart/form-data",
    request: () => {
      const form = new FormData();
      form.set("name", KIMI);
      return panelRequest("units.restart", { cookie: as("ada"), body: form, contentType: null });
    },
    status: 415,
    message: /Only application\/json/,
    auditUser: "ada",
  },
  {
    name: "text/plain with a JSON body",
    request: restart("ada", undefined, { contentType: "text/plain", body: JSON.stringify({ host: HOST, name: KIMI }) }),
    status: 415,
    message: /Only application\/json/,
    auditUser: "ada",
  },
  {
    name: "no content type",
    request: restart("ada", undefined, { contentType: null, body: JSON.stringify({ host: HOST, name: KIMI }) }),
    status: 415,
    message: /Only application\/json/,
    auditUser: "ada",
  },
  {
    name: "gzip-encoded body",
    request: restart("ada", { host: HOST, name: KIMI }, { headers: { "content-encoding": "gzip" } }),
    status: 415,
    message: /Compressed/,
    auditUser: "ada",
  },
  { name: "PUT", request: restart("ada", { host: HOST, name: KIMI }, { method: "PUT" }), status: 405, message: /Method not allowed/, auditUser: "ada" },
  {
    name: "mutation sent as GET",
    request: () => panelRequest("units.restart", { method: "GET", input: { host: HOST, name: KIMI }, cookie: as("ada") }),
    status: 405,
    message: /Unsupported GET-request to mutation|method/i,
    auditUser: "ada",
    auditAction: "restart",
  },
  {
    name: "unknown procedure",
    request: () => panelRequest("units.reboot", { input: { host: HOST, name: KIMI }, cookie: as("ada") }),
    status: 404,
    message: /No procedure found|units\.reboot/,
    auditUser: "ada",
  },
  {
    name: "batch of 30 restarts",
    request: () => {
      const input = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [String(i), { host: HOST, name: KIMI }]));
      return panelRequest(Array(30).fill("units.restart").join(","), { input, cookie: as("ada"), query: "batch=1" });
    },
    status: 400,
    message: /More than 25 calls/,
    auditUser: "ada",
  },

  // --- sessions -----------------------------------------------------------------------------
  { name: "no session cookie", request: restart(null, { host: HOST, name: EMBED }), status: 401, message: /Not signed in: sign in first/, auditUser: null },
  {
    name: "forged session id",
    request: restart(null, { host: HOST, name: EMBED }, { cookie: `gpudeck_session=${"A".repeat(43)}` }),
    status: 401,
    message: /session has ended/,
    auditUser: null,
  },
  {
    name: "malformed session cookie",
    request: restart(null, { host: HOST, name: EMBED }, { cookie: "gpudeck_session=../../admin" }),
    status: 401,
    message: /Not signed in/,
    auditUser: null,
  },
  {
    name: "planted second session cookie",
    request: () => panelRequest("units.restart", { input: { host: HOST, name: EMBED }, cookie: `${as("ada")}; gpudeck_session=${"B".repeat(43)}` }),
    status: 401,
    message: /Not signed in/,
    auditUser: null,
  },
  {
    name: "__Host- cookie over plain http",
    request: () => panelRequest("units.restart", { input: { host: HOST, name: EMBED }, cookie: `__Host-${as("ada")}` }),
    status: 401,
    message: /Not signed in/,
    auditUser: null,
  },
  {
    name: "X-Forwarded-User from an untrusted peer (proxy mode off)",
    request: restart(null, { host: HOST, name: EMBED }, { headers: { "x-forwarded-user": "ada", "x-forwarded-for": "127.0.0.1" } }),
    status: 401,
    message: /Not signed in/,
    auditUser: null,
  },
  {
    name: "expired session (idle timeout passed)",
    request: async () => {
      const c = await login(panel, "eve");
      tp.clock.offsetMs = panel.config.sessionIdleMs + 60_000;
      return panelRequest("units.restart", { input: { host: HOST, name: EMBED }, cookie: c });
    },
    status: 401,
    message: /timed out/,
    auditUser: null,
  },
  {
    name: "session of a user disabled meanwhile",
    request: async () => {
      const c = await login(panel, "dora");
      await panel.auth.users.setDisabled("dora", true);
      return panelRequest("units.restart", { input: { host: HOST, name: EMBED }, cookie: c });
    },
    status: 401,
    message: /Not signed in/,
    auditUser: null,
  },

  // --- roles and unit patterns --------------------------------------------------------------
  ...(["start", "stop", "restart", "resetFailed", "kill"] as const).map((proc): HostileCase => ({
    name: `viewer calls units.${proc}`,
    request: () => panelRequest(`units.${proc}`, { input: { host: HOST, name: EMBED }, cookie: as("vera") }),
    status: 403,
    message: /viewers cannot change units/,
    auditUser: "vera",
  })),
  {
    name: "operator restarts a unit outside their patterns",
    request: restart("otto", { host: HOST, name: KIMI }),
    status: 403,
    message: /not in your units \(vllm-embed-\*\)/,
    auditUser: "otto",
    auditAction: "restart",
  },
  {
    name: "operator stops a unit outside their patterns",
    request: () => panelRequest("units.stop", { input: { host: HOST, name: KIMI }, cookie: as("otto") }),
    status: 403,
    message: /not in your units/,
    auditUser: "otto",
    auditAction: "stop",
  },
  {
    name: "operator kills their own unit (admins only)",
    request: () => panelRequest("units.kill", { input: { host: HOST, name: EMBED }, cookie: as("otto") }),
    status: 403,
    message: /only admins can kill/,
    auditUser: "otto",
    auditAction: "kill",
  },
  {
    name: "viewer reads the audit log",
    request: () => panelRequest("audit.list", { method: "GET", input: {}, cookie: as("vera") }),
    status: 403,
    message: /viewers cannot see the audit log/,
    auditUser: "vera",
    auditAction: "audit.view",
  },

  // --- the users area (admins only) ---------------------------------------------------------
  {
    name: "viewer creates an admin",
    request: () => panelRequest("users.create", { input: { username: "mallory", role: "admin", unitPatterns: [], password: PASSWORD }, cookie: as("vera") }),
    status: 403,
    message: /only admins can manage users/,
    auditUser: "vera",
    auditAction: "user.add",
  },
  {
    name: "operator disables the admin",
    request: () => panelRequest("users.setDisabled", { input: { username: "ada", disabled: true }, cookie: as("otto") }),
    status: 403,
    message: /only admins can manage users/,
    auditUser: "otto",
    auditAction: "user.disable",
  },
  {
    name: "operator resets the admin's password",
    request: () => panelRequest("users.resetPassword", { input: { username: "ada", password: "taken over by otto" }, cookie: as("otto") }),
    status: 403,
    message: /only admins can manage users/,
    auditUser: "otto",
    auditAction: "user.passwd",
  },
  {
    name: "operator promotes themself",
    request: () => panelRequest("users.update", { input: { username: "otto", role: "admin" }, cookie: as("otto") }),
    status: 403,
    message: /only admins can manage users/,
    auditUser: "otto",
    auditAction: "user.update",
  },
  {
    name: "signed out: disable a user",
    request: () => panelRequest("users.setDisabled", { input: { username: "ada", disabled: true } }),
    status: 401,
    message: /Not signed in/,
    auditUser: null,
    auditAction: "user.disable",
  },
  {
    name: "user name with a shell substitution",
    request: () => panelRequest("users.create", { input: { username: "$(reboot)", role: "viewer", unitPatterns: [], password: PASSWORD }, cookie: as("ada") }),
    status: 400,
    message: /username may only contain ASCII letters/,
    auditUser: "ada",
    auditAction: "user.add",
  },
  {
    name: "unit pattern that is an option",
    request: () =>
      panelRequest("users.create", { input: { username: "pat", role: "operator", unitPatterns: ["-H evil"], password: PASSWORD }, cookie: as("ada") }),
    status: 400,
    message: /must not start with '-'/,
    auditUser: "ada",
    auditAction: "user.add",
  },
  {
    name: "extra key on a user update",
    request: () => panelRequest("users.update", { input: { username: "otto", unitPatterns: ["vllm-*"], isAdmin: true }, cookie: as("ada") }),
    status: 400,
    message: /unrecognized key|isAdmin/i,
    auditUser: "ada",
    auditAction: "user.update",
  },
  {
    name: "role that does not exist",
    request: () => panelRequest("users.update", { input: { username: "otto", role: "root" }, cookie: as("ada") }),
    status: 400,
    message: /role must be viewer, operator or admin/,
    auditUser: "ada",
    auditAction: "user.update",
  },
  {
    name: "admin disables themself",
    request: () => panelRequest("users.setDisabled", { input: { username: "ADA", disabled: true }, cookie: as("ada") }),
    status: 403,
    message: /cannot disable your own account/,
    auditUser: "ada",
    auditAction: "user.disable",
  },
  {
    name: "oversized password on a reset (body limit)",
    request: () => panelRequest("users.resetPassword", { input: { username: "vera", password: "p".repeat(100_000) }, cookie: as("ada") }),
    status: 413,
    message: /over 65536 bytes/,
    auditUser: "ada",
  },
  {
    name: "cross-origin user creation (a page elsewhere riding the admin's cookie)",
    request: () =>
      panelRequest("users.create", {
        input: { username: "mallory", role: "admin", unitPatterns: [], password: PASSWORD },
        cookie: as("ada"),
        headers: { origin: "http://evil.example", "sec-fetch-site": "cross-site" },
      }),
    status: 403,
    message: /Cross-origin request refused/,
    auditUser: "ada",
    auditAction: "user.add",
  },
  {
    name: "user mutation sent as GET (a link or an <img> riding the admin's cookie)",
    request: () => panelRequest("users.resetPassword", { method: "GET", input: { username: "otto", password: "link-set password" }, cookie: as("ada") }),
    status: 405,
    message: /Unsupported GET-request to mutation|method/i,
    auditUser: "ada",
    auditAction: "user.passwd",
  },
  {
    name: "oversized user update before tRPC runs (audited under its action name)",
    request: () => panelRequest("users.setDisabled", { input: { username: "otto", disabled: true, pad: "x".repeat(70_000) }, cookie: as("ada") }),
    status: 413,
    message: /over 65536 bytes/,
    auditUser: "ada",
    auditAction: "user.set-disabled",
  },

  // --- cross-origin and DNS rebinding -------------------------------------------------------
  {
    name: "cross-origin POST",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { origin: "http://evil.example" } }),
    status: 403,
    message: /Cross-origin request refused/,
    auditUser: "ada",
  },
  {
    name: "Origin: null (sandboxed frame)",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { origin: "null" } }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "look-alike origin (our host as a subdomain prefix)",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { origin: `${ORIGIN}.evil.example` } }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "cross-site POST without Origin (Sec-Fetch-Site)",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { origin: null, "sec-fetch-site": "cross-site" } }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "same-site sibling POST (Sec-Fetch-Site same-site)",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { origin: null, "sec-fetch-site": "same-site" } }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "cross-origin SSE (events.watch)",
    request: () =>
      panelRequest("events.watch", {
        sse: true,
        input: { watch: "host", host: HOST },
        cookie: as("ada"),
        headers: { origin: "http://evil.example", "sec-fetch-site": "cross-site" },
      }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "cross-site SSE without Origin (followJournal)",
    request: () =>
      panelRequest("units.followJournal", { sse: true, input: { host: HOST, name: KIMI }, cookie: as("ada"), headers: { "sec-fetch-site": "cross-site" } }),
    status: 403,
    message: /Cross-origin/,
    auditUser: "ada",
  },
  {
    name: "DNS rebinding: foreign Host with a matching Origin",
    request: restart("ada", { host: HOST, name: EMBED }, { headers: { host: "evil.example:3000", origin: "http://evil.example:3000" } }),
    status: 403,
    message: /Host 'evil.example' is not a name of this panel/,
    auditUser: "ada",
  },
];

describe("hostile input through the panel's API endpoint", () => {
  it("has at least 50 cases", async () => {
    expect(CASES.length).toBeGreaterThanOrEqual(50);
  });

  it.each(CASES.map((c) => [c.name, c] as const))("%s: refused, not executed, audited", async (_name, c) => {
    const actionsBefore = agent.hub.recentActions(100_000).length;
    const jobsBefore = jobCounts();
    const auditMark = await lastAuditId();
    try {
      const r = await send(panel, await c.request());
      expect(r.status, r.text).toBe(c.status);
      expect(messageOf(r)).toMatch(c.message);
      // nothing reached systemd: no action recorded by the agent, no job on the units
      expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore);
      expect(jobCounts()).toEqual(jobsBefore);
      const rows = (await panel.auth.audit.queryAudit({ limit: 100 })).filter((row) => row.id > auditMark);
      const refusal = rows.find((row) => (row.outcome === "refused" || row.outcome === "error") && row.user === c.auditUser);
      expect(refusal, JSON.stringify(rows)).toBeDefined();
      expect(refusal!.sourceAddr).toBe("10.20.30.40");
      if (c.auditAction) expect(refusal!.action).toBe(c.auditAction);
      expect(refusal!.detail ?? refusal!.reason ?? "").not.toBe("");
    } finally {
      tp.clock.offsetMs = 0;
    }
  });

  it("the refused users calls above changed no user", async () => {
    const names = (await panel.auth.users.listUsers()).map((u) => u.username);
    for (const name of ["mallory", "pat", "$(reboot)"]) expect(names).not.toContain(name);
    expect(await panel.auth.users.getUser("ada")).toMatchObject({ role: "admin", disabled: false });
    expect(await panel.auth.users.getUser("otto")).toMatchObject({ role: "operator", unitPatterns: ["vllm-embed-*"], disabled: false });
    expect((await panel.auth.users.verifyCredentials("ada", PASSWORD)).ok).toBe(true);
    expect((await panel.auth.users.verifyCredentials("vera", PASSWORD)).ok).toBe(true);
  });

  it("control: the same harness sees an allowed restart reach the agent (so the checks above can fail)", async () => {
    const actionsBefore = agent.hub.recentActions(100_000).length;
    const r = await call(panel, "units.restart", { input: { host: HOST, name: EMBED, reason: "hostile suite control" }, cookie: as("otto") });
    expect(r.status, r.text).toBe(200);
    expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore + 1);
    const last = agent.hub.recentActions(1)[0]!;
    expect(last).toMatchObject({ unit: EMBED, action: "restart", user: "otto", role: "operator", sourceAddr: "10.20.30.40", reason: "hostile suite control" });
    const row = (await panel.auth.audit.queryAudit({ user: "otto", action: "restart", limit: 1 }))[0]!;
    expect(row).toMatchObject({ unit: EMBED, reason: "hostile suite control", role: "operator", sourceAddr: "10.20.30.40", host: HOST });
    expect(row.jobId).toBe(last.jobId);
  });

  it("a forged X-Forwarded-For never becomes the source address", async () => {
    const mark = await lastAuditId();
    await call(panel, "units.restart", { input: { host: HOST, name: "--help" }, cookie: as("ada"), headers: { "x-forwarded-for": "1.2.3.4" } });
    const row = (await panel.auth.audit.queryAudit({ limit: 1 }))[0]!;
    expect(row.id).toBeGreaterThan(mark);
    expect(row.sourceAddr).toBe("10.20.30.40");
  });

  it("a refused request is audited once, not twice", async () => {
    const mark = await lastAuditId();
    await call(panel, "units.restart", { method: "GET", input: { host: HOST, name: KIMI }, cookie: as("ada") });
    await call(panel, "units.restart", { input: { host: HOST, name: "a;reboot" }, cookie: as("ada") });
    // any procedure behind `audited`, e.g. the Hosts page's, not only the unit and user ones
    await call(panel, "hosts.add", { input: { name: "Not A Host", url: "ftp://x", token: "t" }, cookie: as("ada") });
    const rows = (await panel.auth.audit.queryAudit({ limit: 10 })).filter((r) => r.id > mark);
    expect(rows.map((r) => r.action)).toEqual(["host.add", "restart", "restart"]);
  });
});

describe("a panel holding the wrong agent token", () => {
  let bad: TestPanel;
  let adaCookie: string;
  beforeAll(async () => {
    bad = await startTestPanel({ url: agent.url, token: "not-the-agent-token-0123456789abcdefghij" }, { panel: { background: true } });
    await addUser(bad.panel, "ada", "admin");
    adaCookie = await login(bad.panel, "ada");
  });
  afterAll(async () => bad?.close());

  it("reads fail with a clear error naming the token's source, never the token", async () => {
    const r = await call(bad.panel, "host.status", { method: "GET", input: { host: HOST }, cookie: adaCookie });
    expect(r.status).toBe(502);
    expect(messageOf(r)).toMatch(/refused the panel's bearer token \(HTTP 401\); check GPUDECK_AGENT_TOKEN/);
    expect(r.text).not.toContain("not-the-agent-token");
  });

  it("an action fails clearly, reaches nothing and is audited as an error", async () => {
    const actionsBefore = agent.hub.recentActions(100_000).length;
    const r = await call(bad.panel, "units.restart", { input: { host: HOST, name: EMBED }, cookie: adaCookie });
    expect(r.status).toBe(502);
    expect(messageOf(r)).toMatch(/refused the panel's bearer token/);
    expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore);
    const row = (await bad.panel.auth.audit.queryAudit({ action: "restart", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "ada", unit: EMBED, outcome: "error" });
    expect(row.detail).toMatch(/bearer token/);
  });

  it("the browser's event stream shows the host down with the same error instead of stalling", async () => {
    await expect.poll(() => bad.panel.fleet.get(HOST)?.state, { timeout: 5000 }).toBe("down");
    const stream = await openEventStream(bad.panel, adaCookie);
    const text = await stream.until(/"kind":"host-snapshot".*"state":"down"/);
    await stream.close();
    expect(text).toMatch(/refused the panel's bearer token \(HTTP 401\); check GPUDECK_AGENT_TOKEN/);
    expect(text).not.toContain("not-the-agent-token");
  });

  it("the fleet hub reports it, and hosts.list says so", async () => {
    await expect.poll(() => bad.panel.fleet.get(HOST)?.error, { timeout: 5000 }).toMatch(/refused the panel's bearer token/);
    const r = await call(bad.panel, "hosts.list", { method: "GET", cookie: adaCookie });
    expect(r.status).toBe(200);
    expect(r.json!.result!.data).toMatchObject([{ name: HOST, state: "down", error: expect.stringMatching(/bearer token/) }]);
    expect(r.text).not.toContain("not-the-agent-token");
  });
});

describe("the per-unit action guard", () => {
  it("a second restart within the window needs confirmed: true, and the refusal names who and when", async () => {
    const QWEN = "vllm-qwen-draft.service";
    const first = await call(panel, "units.restart", { input: { host: HOST, name: QWEN, reason: "first" }, cookie: as("ada") });
    expect(first.status, first.text).toBe(200);
    const actionsBefore = agent.hub.recentActions(100_000).length;
    const second = await call(panel, "units.restart", { input: { host: HOST, name: QWEN, reason: "second" }, cookie: as("ada") });
    expect(second.status).toBe(409);
    expect(second.json?.error?.data?.code).toBe("CONFLICT");
    expect(messageOf(second)).toMatch(/^Confirmation required: ada restarted vllm-qwen-draft\.service \d+ s ago/);
    expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore);
    const refused = (await panel.auth.audit.queryAudit({ unit: QWEN, limit: 1 }))[0]!;
    expect(refused).toMatchObject({ user: "ada", action: "restart", outcome: "refused", reason: "second" });
    const third = await call(panel, "units.restart", { input: { host: HOST, name: QWEN, reason: "third", confirmed: true }, cookie: as("ada") });
    expect(third.status, third.text).toBe(200);
    expect(agent.hub.recentActions(100_000).length).toBe(actionsBefore + 1);
    // units.get tells the UI before anyone clicks
    const get = await call(panel, "units.get", { method: "GET", input: { host: HOST, name: QWEN }, cookie: as("vera") });
    expect((get.json?.result?.data as { recentAction: unknown }).recentAction).toMatchObject({ user: "ada", action: "restart" });
  });

  it("outside the window a restart passes again", async () => {
    const first = await call(panel, "units.stop", { input: { host: HOST, name: "vllm-llama-70b.service" }, cookie: as("ada") });
    expect(first.status, first.text).toBe(200);
    tp.clock.offsetMs = panel.config.actionGuardMs + 1000;
    try {
      const again = await call(panel, "units.restart", { input: { host: HOST, name: "vllm-llama-70b.service" }, cookie: as("ada") });
      // the clock moved past the idle timeout? no: 60 s is far below it, the session still holds
      expect(again.status, again.text).toBe(200);
    } finally {
      tp.clock.offsetMs = 0;
    }
  });
});

describe("password handling in the hostile suite", () => {
  it("a wrong password is one generic message, whether or not the user exists", async () => {
    const unknown = await call(panel, "session.login", { input: { username: "nobody", password: PASSWORD } });
    const wrong = await call(panel, "session.login", { input: { username: "vera", password: "wrong password 123" } });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(messageOf(unknown)).toBe(messageOf(wrong));
  });
});
