/**
 * What each role sees (issue 25, findings 5 and 8), against the panel's real endpoint in front of
 * a real agent on a simulated host: journal-sourced text (a diagnosis's log evidence, a crash-loop
 * report's last line, the engine's last log line) only for callers with journal access, and said
 * to be hidden to the others; a host's connection error (its agent URL, the panel's token file)
 * in full for admins only; no source address on the event stream or the timeline; status-page
 * streams that end with a signed-in viewer's session and are capped per address.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { readinessOf } from "../agent/readiness/index";
import type { Diagnosis } from "../contract/diagnosis";
import type { CrashLoopReport } from "../contract/faults";
import type { HostSummary } from "../contract/fleet";
import { unknownReadiness, type Readiness } from "../contract/readiness";
import { JOURNAL_HIDDEN, JOURNAL_HIDDEN_LABEL } from "../contract/roleViews";
import type { JournalEntry, UnitDetail } from "../contract/types";
import { handleStatusEvents } from "../statusPage/http";
import { PEER_HEADER } from "./context";
import type { Panel } from "./instance";
import {
  addUser,
  bearerHeaders,
  call,
  HOST,
  hostConnected,
  login,
  openEventStream,
  openStream,
  readSse,
  startTestAgent,
  startTestPanel,
  type RpcResult,
  type TestPanel,
} from "./panelTestHarness";

const KIMI = "vllm-kimi-k25.service";
const EMBED = "vllm-embed-small.service";
const NOPE = "vllm-does-not-exist.service";
/** Text only journal access may read: in log lines, the crash-loop report and readiness. */
const LOG_SECRET = "log-line-only-for-journal-readers-7f3a";
const READY_SECRET = "engine-line-only-for-journal-readers-91c2";

let agent: RunningAgent;
let tp: TestPanel;
let panel: Panel;
const cookie: Record<string, string> = {};
let restoreJournal: () => void = () => {};
let restoreReadiness: () => void = () => {};

const lineReadiness = (): Readiness => ({
  ...unknownReadiness(Date.now(), "vllm"),
  state: "failed",
  reason: "CUDA out of memory",
  line: { atMs: Date.now(), text: `torch.OutOfMemoryError: ${READY_SECRET}` },
});

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent, { panel: { statusPage: { documentTtlMs: 0, uptimeTtlMs: 0, settingsTtlMs: 0 } } });
  panel = tp.panel;
  await addUser(panel, "ada", "admin");
  await addUser(panel, "otto", "operator", ["vllm-embed-*"]);
  await addUser(panel, "vera", "viewer");
  for (const name of ["ada", "otto", "vera"]) cookie[name] = await login(panel, name);
  await hostConnected(panel);

  // the unit's journal: the service's own lines (a secret among them) and systemd's complaint
  const systemd = agent.hub.host.systemd;
  const journal = systemd.journal.bind(systemd);
  systemd.journal = async (unit: string): Promise<JournalEntry[]> => {
    const at = Date.now() * 1000;
    return [
      { cursor: "c1", atUsec: at - 3e6, unit, priority: 6, pid: 4242, message: `loading with ${LOG_SECRET}` },
      { cursor: "c2", atUsec: at - 2e6, unit, priority: 3, pid: 1, message: `Failed to execute ${LOG_SECRET}: not found` },
    ];
  };
  restoreJournal = () => (systemd.journal = journal);
  const monitor = readinessOf(agent.hub)!;
  const readiness = monitor.readiness.bind(monitor);
  monitor.readiness = (name: string) => (name === KIMI ? lineReadiness() : readiness(name));
  restoreReadiness = () => (monitor.readiness = readiness);
}, 30_000);

afterAll(async () => {
  restoreJournal();
  restoreReadiness();
  await tp?.close();
  await agent?.close();
});

function data<T>(r: RpcResult): T {
  if (r.status !== 200) throw new Error(`${r.status}: ${r.text}`);
  return r.json!.result!.data as T;
}
const query = <T>(user: string, procedure: string, input?: unknown, p: Panel = panel) =>
  call(p, procedure, { method: "GET", input, cookie: cookie[user]! }).then((r) => ({ r, data: data<T>(r) }));

describe("journal-sourced text: only for callers with journal access, and said to be hidden", () => {
  it("units.diagnose: a viewer gets the diagnosis without its log lines, and a row saying they were hidden", async () => {
    const { r, data: d } = await query<Diagnosis>("vera", "units.diagnose", { host: HOST, name: NOPE });
    expect(d.code).toBe("not-found");
    expect(d.headline).toMatch(/systemd has no unit named/);
    expect(r.text).not.toContain(LOG_SECRET);
    expect(d.evidence.filter((e) => e.source === "journal")).toEqual([]);
    expect(d.evidence.at(-1)).toEqual({ label: JOURNAL_HIDDEN_LABEL, value: `${d.journalHidden} ${JOURNAL_HIDDEN}`, source: "gpudeck" });
    expect(d.journalHidden).toBeGreaterThanOrEqual(1);
    // operators and admins read the journal: they get the lines
    for (const user of ["otto", "ada"]) {
      const full = await query<Diagnosis>(user, "units.diagnose", { host: HOST, name: NOPE });
      expect(full.r.text, user).toContain(LOG_SECRET);
      expect(full.data.journalHidden, user).toBeUndefined();
    }
  });

  it("units.crashLoop: the last line it wrote is hidden from a viewer, and said to be", async () => {
    const { r, data: report } = await query<CrashLoopReport>("vera", "units.crashLoop", { host: HOST, name: KIMI });
    expect(r.text).not.toContain(LOG_SECRET);
    expect(report).toMatchObject({ unit: KIMI, lastLogLine: null, lastLogLineHidden: true });
    const full = await query<CrashLoopReport>("otto", "units.crashLoop", { host: HOST, name: KIMI });
    expect(full.data.lastLogLine?.message).toContain(LOG_SECRET);
    expect(full.data.lastLogLineHidden).toBeUndefined();
  });

  it("readiness: the engine's last log line is hidden from a viewer in units.get, units.list and the event stream", async () => {
    const viewerStream = await openEventStream(panel, cookie.vera!);
    const adminStream = await openEventStream(panel, cookie.ada!);
    await viewerStream.until(/"kind":"host-snapshot"/);
    await adminStream.until(/"kind":"host-snapshot"/);
    agent.hub.publish({ kind: "readiness", unit: KIMI, readiness: lineReadiness() });
    const seen = await viewerStream.until(/"kind":"readiness"[^\n]*"lineHidden":true/);
    expect(seen).not.toContain(READY_SECRET);
    expect(await adminStream.until(new RegExp(READY_SECRET))).toContain("torch.OutOfMemoryError");
    await viewerStream.close();
    await adminStream.close();

    const detail = await query<{ detail: UnitDetail }>("vera", "units.get", { host: HOST, name: KIMI });
    expect(detail.r.text).not.toContain(READY_SECRET);
    expect(detail.data.detail.readiness).toMatchObject({ state: "failed", reason: "CUDA out of memory", line: null, lineHidden: true });
    expect((await query("ada", "units.get", { host: HOST, name: KIMI })).r.text).toContain(READY_SECRET);

    // the simulated engine's own probe may replace the published readiness (no line) at any moment:
    // publish it again until the list shows it
    const listAfterPublish = async (user: string) => {
      for (let attempt = 0; ; attempt++) {
        agent.hub.publish({ kind: "readiness", unit: KIMI, readiness: lineReadiness() });
        const list = await query<{ units: { name: string; readiness?: Readiness }[] }>(user, "units.list");
        if (list.data.units.find((u) => u.name === KIMI)?.readiness?.state === "failed" || attempt === 4) return list;
      }
    };
    const list = await listAfterPublish("vera");
    expect(list.r.text).not.toContain(READY_SECRET);
    expect(list.data.units.find((u) => u.name === KIMI)?.readiness).toMatchObject({ state: "failed", line: null, lineHidden: true });
    expect((await listAfterPublish("otto")).r.text).toContain(READY_SECRET);

    // a fresh fleet stream's snapshot too
    const fleet = await openEventStream(panel, cookie.vera!, { watch: "fleet" });
    const snapshot = await fleet.until(/"kind":"fleet-snapshot"/);
    await fleet.close();
    expect(snapshot).toContain(`"lineHidden":true`);
    expect(snapshot).not.toContain(READY_SECRET);
  });

  it("with GPUDECK_VIEWER_JOURNAL=1 viewers read them", async () => {
    const open = await startTestPanel(agent, { env: { GPUDECK_VIEWER_JOURNAL: "1" } });
    try {
      await addUser(open.panel, "vera", "viewer");
      const vera = await login(open.panel, "vera");
      await hostConnected(open.panel);
      const r = await call(open.panel, "units.diagnose", { method: "GET", input: { host: HOST, name: NOPE }, cookie: vera });
      expect(r.text).toContain(LOG_SECRET);
      const c = await call(open.panel, "units.crashLoop", { method: "GET", input: { host: HOST, name: KIMI }, cookie: vera });
      expect(c.text).toContain(LOG_SECRET);
    } finally {
      await open.close();
    }
  });
});

describe("a change of role reaches every open stream (issue 25, finding 6)", () => {
  it("an operator made viewer: their open event stream ends (the browser reconnects) and carries no log line after", async () => {
    await addUser(panel, "olga", "operator", ["vllm-*"]);
    const olga = await login(panel, "olga");
    const stream = await openEventStream(panel, olga);
    await stream.until(/"kind":"host-snapshot"/);
    agent.hub.publish({ kind: "readiness", unit: KIMI, readiness: lineReadiness() });
    expect(await stream.until(new RegExp(READY_SECRET))).toContain("torch.OutOfMemoryError");
    const demoted = await call(panel, "users.update", { input: { username: "olga", role: "viewer" }, cookie: cookie.ada! });
    expect(demoted.status, demoted.text).toBe(200);
    // the panel re-checks at once (the periodic check is 15 s away): the stream ends without an error
    const ended = await stream.until(/event: return/, 2000);
    const after = ended.slice(ended.lastIndexOf(READY_SECRET) + READY_SECRET.length);
    expect(after).not.toMatch(/serialized-error/);
    // a new stream has the viewer's view
    const again = await openEventStream(panel, olga);
    await again.until(/"kind":"host-snapshot"/);
    agent.hub.publish({ kind: "readiness", unit: KIMI, readiness: lineReadiness() });
    const seen = await again.until(/"kind":"readiness"[^\n]*"lineHidden":true/);
    await again.close();
    expect(seen).not.toContain(READY_SECRET);
  });

  it("an admin made operator: their open event stream ends too (hosts' errors are for admins)", async () => {
    await addUser(panel, "adam", "admin");
    const adam = await login(panel, "adam");
    const stream = await openEventStream(panel, adam, { watch: "fleet" });
    await stream.until(/"kind":"fleet-snapshot"/);
    expect((await call(panel, "users.update", { input: { username: "adam", role: "operator" }, cookie: cookie.ada! })).status).toBe(200);
    await stream.until(/event: return/, 2000);
  });

  it("a change that keeps what the stream shows leaves it open", async () => {
    const stream = await openEventStream(panel, cookie.otto!);
    await stream.until(/"kind":"host-snapshot"/);
    expect((await call(panel, "users.update", { input: { username: "otto", unitPatterns: ["vllm-*"] }, cookie: cookie.ada! })).status).toBe(200);
    await expect(stream.until(/event: return|serialized-error/, 500)).rejects.toThrow(/did not show/);
    await stream.close();
    expect((await call(panel, "users.update", { input: { username: "otto", unitPatterns: ["vllm-embed-*"] }, cookie: cookie.ada! })).status).toBe(200);
  });

  it("an API token's journal stream ends with FORBIDDEN when its owner is made viewer", async () => {
    await addUser(panel, "oona", "operator", ["vllm-*"]);
    const oona = await login(panel, "oona");
    const made = await call(panel, "tokens.create", { input: { name: "ci", role: "operator", expiresInDays: 1 }, cookie: oona });
    expect(made.status, made.text).toBe(200);
    const { token } = made.json!.result!.data as { token: string };
    const journal = await openStream(panel, "units.followJournal", "", { host: HOST, name: EMBED }, bearerHeaders(token));
    await journal.until(/data: /);
    expect((await call(panel, "users.update", { input: { username: "oona", role: "viewer" }, cookie: cookie.ada! })).status).toBe(200);
    expect(await journal.until(/event: serialized-error\ndata: [^\n]*\n/, 2000)).toMatch(/Not allowed any more: viewers cannot read journals/);
  });
});

describe("source addresses stay in the audit log", () => {
  it("an action's record on the event stream and in the timeline carries no source address; the audit row does", async () => {
    const stream = await openEventStream(panel, cookie.vera!);
    await stream.until(/"kind":"host-snapshot"/);
    const r = await call(panel, "units.restart", { input: { host: HOST, name: EMBED }, cookie: cookie.ada!, headers: { [PEER_HEADER]: "203.0.113.77" } });
    expect(r.status).toBe(200);
    const text = await stream.until(/"kind":"action"/);
    await stream.close();
    expect(text).not.toContain("203.0.113.77");
    expect(text).toMatch(/"kind":"action"[^\n]*"sourceAddr":null/);
    const timeline = await query<{ actions: { sourceAddr: string | null }[] }>("vera", "units.timeline", { host: HOST, name: EMBED });
    expect(timeline.data.actions.length).toBeGreaterThan(0);
    expect(timeline.r.text).not.toContain("203.0.113.77");
    const row = (await panel.auth.audit.queryAudit({ action: "restart", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "ada", unit: EMBED, sourceAddr: "203.0.113.77" });
  });
});

describe("a host's connection error names its agent and token file: admins only", () => {
  let bad: TestPanel;
  let dir: string;
  const names: Record<string, string> = {};
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gpudeck-token-"));
    const tokenFile = path.join(dir, "gpu-x.token");
    writeFileSync(tokenFile, "not-the-agent-token-0123456789abcdefghij\n", { mode: 0o600 });
    bad = await startTestPanel(agent, {
      env: { GPUDECK_AGENT_URL: "", GPUDECK_AGENTS_JSON: JSON.stringify([{ name: "gpu-x", url: agent.url, tokenFile }]) },
      panel: { background: true },
    });
    for (const [name, role] of [
      ["ada", "admin"],
      ["otto", "operator"],
      ["vera", "viewer"],
    ] as const) {
      await addUser(bad.panel, name, role, role === "operator" ? ["vllm-*"] : []);
      names[name] = await login(bad.panel, name);
    }
    const deadline = Date.now() + 5000;
    while (!/refused the panel's bearer token/.test(bad.panel.fleet.get("gpu-x")?.error ?? "")) {
      if (Date.now() > deadline) throw new Error(`gpu-x: ${bad.panel.fleet.get("gpu-x")?.error ?? "no error yet"}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    names.tokenFile = tokenFile;
  });
  afterAll(async () => {
    await bad?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const as = (user: string, procedure: string) => call(bad.panel, procedure, { method: "GET", cookie: names[user]! });

  it("admins read it in full on hosts.list; operators and viewers get a sentence without the URL or the file", async () => {
    const admin = await as("ada", "hosts.list");
    expect(data<HostSummary[]>(admin)[0]!.error).toMatch(/refused the panel's bearer token/);
    expect(admin.text).toContain(names.tokenFile);
    expect(admin.text).toContain(agent.url);
    for (const user of ["otto", "vera"]) {
      const r = await as(user, "hosts.list");
      const error = data<HostSummary[]>(r)[0]!.error;
      expect(error, user).toMatch(/^the agent refused the panel's token; an admin sees the details/);
      expect(r.text, user).not.toContain(names.tokenFile);
      expect(r.text, user).not.toContain(agent.url.replace(/^https?:\/\//, ""));
    }
  });

  it("errors of calls to that agent: in full for admins, without the URL or the file for others", async () => {
    const input = { host: "gpu-x", name: EMBED };
    const admin = await call(bad.panel, "units.get", { method: "GET", input, cookie: names.ada! });
    expect(admin.status).toBe(502);
    expect(admin.text).toContain(names.tokenFile);
    const viewer = await call(bad.panel, "units.get", { method: "GET", input, cookie: names.vera! });
    expect(viewer.status).toBe(502);
    expect(viewer.json?.error?.message).toMatch(/^the agent refused the panel's token; an admin sees the details/);
    expect(viewer.text).not.toContain(names.tokenFile);
    expect(viewer.text).not.toContain(agent.url.replace(/^https?:\/\//, ""));
  });

  it("the same in units.list and on the fleet event stream", async () => {
    const list = await as("vera", "units.list");
    expect(list.text).toMatch(/the agent refused the panel's token/);
    expect(list.text).not.toContain(names.tokenFile);
    const stream = await openEventStream(bad.panel, names.vera!, { watch: "fleet" });
    const text = await stream.until(/"kind":"fleet-snapshot"/);
    await stream.close();
    expect(text).toMatch(/the agent refused the panel's token/);
    expect(text).not.toContain(names.tokenFile);
    expect(text).not.toContain(agent.url.replace(/^https?:\/\//, ""));
  });
});

describe("status page streams", () => {
  const req = (path: string, headers: Record<string, string> = {}) =>
    new Request(`http://127.0.0.1:3000${path}`, { headers: { host: "127.0.0.1:3000", ...headers } });

  it("a signed-in viewer's stream (the page is off: only sessions may look) ends when the session does", async () => {
    const viewer = await login(panel, "vera");
    const deps = { ...panel.statusHttp, streamIntervalMs: 50, sessionRecheckMs: 100 };
    const res = await handleStatusEvents(req("/api/status/events", { cookie: viewer }), deps);
    expect(res.status).toBe(200);
    expect(await call(panel, "session.logout", { cookie: viewer })).toMatchObject({ status: 200 });
    const text = await readSse(res, (t) => t.includes("event: gone"), 5000);
    expect(text).toContain("event: gone\ndata: your session has ended; sign in again");
  });

  it("anonymous streams of a public page: capped per address as well as for the panel", async () => {
    const admin = await login(panel, "ada");
    expect((await call(panel, "statusPage.update", { input: { enabled: true, public: true }, cookie: admin })).status).toBe(200);
    const deps = { ...panel.statusHttp, streamIntervalMs: 1000, streamsPerAddress: 3 };
    const from = (address: string) => handleStatusEvents(req("/api/status/events", { [PEER_HEADER]: address }), deps);
    const open = [await from("198.51.100.7"), await from("198.51.100.7"), await from("198.51.100.7")];
    expect(open.map((r) => r.status)).toEqual([200, 200, 200]);
    const fourth = await from("198.51.100.7");
    expect(fourth.status).toBe(429);
    expect(((await fourth.json()) as { error: string }).error).toMatch(/from your address \(at most 3\)/);
    // IPv6: one client's /64 counts as one address
    const v6 = [await from("2001:db8:1:2::a"), await from("2001:db8:1:2::b"), await from("2001:db8:1:2::c"), await from("2001:db8:1:2::d")];
    expect(v6.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    // another address is not affected; one closed stream frees a place
    const other = await from("198.51.100.8");
    expect(other.status).toBe(200);
    await open[0]!.body!.cancel();
    const again = await from("198.51.100.7");
    expect(again.status).toBe(200);
    for (const r of [...open.slice(1), ...v6.slice(0, 3), other, again]) await r.body!.cancel();
  });
});
