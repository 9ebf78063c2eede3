/**
 * Journal search, downloads and the unit file through the panel's real endpoint (issue 24): the
 * journal right as today (operators yes, viewers not unless the panel allows it), downloads
 * audited with their filters, the unit file masked for all and revealed for admins only, audited.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import { addUser, call, HOST, hostConnected, login, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";

const KIMI = "vllm-kimi-k25.service";
let agent: RunningAgent;
let tp: TestPanel;
const cookie: Record<string, string> = {};

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "ada", "admin");
  await addUser(tp.panel, "otto", "operator", ["vllm-*"]);
  await addUser(tp.panel, "vera", "viewer");
  for (const u of ["ada", "otto", "vera"]) cookie[u] = await login(tp.panel, u);
  await hostConnected(tp.panel);
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

describe("journal search at the panel", () => {
  it("an operator searches with filters; a viewer is refused as for the journal itself", async () => {
    const input = { host: HOST, name: KIMI, since: 0, grep: "kimi", priority: "debug", limit: 50 };
    const r = await call(tp.panel, "units.journal", { method: "GET", input, cookie: cookie.otto });
    expect(r.status, r.text).toBe(200);
    const h = await call(tp.panel, "units.journalHistogram", { method: "GET", input: { host: HOST, name: KIMI }, cookie: cookie.otto });
    expect(h.status, h.text).toBe(200);
    expect(await call(tp.panel, "units.journal", { method: "GET", input, cookie: cookie.vera })).toMatchObject({ status: 403 });
    // a grep that could backtrack without end never reaches the agent
    const bad = await call(tp.panel, "units.journal", { method: "GET", input: { ...input, grep: "(a+)+" }, cookie: cookie.otto });
    expect(bad.status).toBe(400);
  });

  it("a download is audited with its filters, never its text", async () => {
    const r = await call(tp.panel, "units.downloadJournal", { input: { host: HOST, name: KIMI, since: 0, priority: "info" }, cookie: cookie.otto });
    expect(r.status, r.text).toBe(200);
    const row = (await tp.panel.auth.audit.queryAudit({ action: "journal.download", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "otto", unit: KIMI, host: HOST, outcome: "ok" });
    expect(row.detail).toMatch(/^\d+ lines: since 1970-01-01T00:00:00\.000Z, priority info$/);
    const refused = await call(tp.panel, "units.downloadJournal", { input: { host: HOST, name: KIMI }, cookie: cookie.vera });
    expect(refused.status).toBe(403);
    expect((await tp.panel.auth.audit.queryAudit({ action: "journal.download", user: "vera", limit: 1 }))[0]).toMatchObject({ outcome: "refused" });
  });

  it("the unit file: masked for an operator; revealed for an admin (audited); refused for an operator", async () => {
    const f = await call(tp.panel, "units.file", { method: "GET", input: { host: HOST, name: KIMI }, cookie: cookie.otto });
    expect(f.status, f.text).toBe(200);
    expect(f.text).not.toMatch(/hf_simulatedDemoToken|sk-simulated-demo-key/);
    expect(f.text).toContain("HF_TOKEN=••••");
    const r = await call(tp.panel, "reveal.unitFile", { input: { host: HOST, name: KIMI }, cookie: cookie.ada });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain("hf_simulatedDemoToken");
    expect((await tp.panel.auth.audit.queryAudit({ action: "unitFile.reveal", limit: 1 }))[0]).toMatchObject({ user: "ada", outcome: "ok" });
    const no = await call(tp.panel, "reveal.unitFile", { input: { host: HOST, name: KIMI }, cookie: cookie.otto });
    expect(no.status).toBe(403);
  });
});
