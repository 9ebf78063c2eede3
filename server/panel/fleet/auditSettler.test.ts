/**
 * The fleet hub's stream from an agent feeds the audit log: audit rows get the job result when the
 * job ends, and that keeps working across an agent restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../../agent/main";
import { addUser, call, HOST, login, startTestAgent, startTestPanel, type TestPanel } from "../panelTestHarness";

const EMBED = "vllm-embed-small.service";
const QWEN = "vllm-qwen-draft.service";
let agent: RunningAgent;
let agentDir: string;
let port: number;
let tp: TestPanel;
let ada: string;

beforeAll(async () => {
  agentDir = mkdtempSync(path.join(tmpdir(), "gpudeck-agent-"));
  agent = await startTestAgent({ dataDir: agentDir });
  port = Number(new URL(agent.url).port);
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "ada", "admin");
  ada = await login(tp.panel, "ada");
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
  rmSync(agentDir, { recursive: true, force: true });
});

async function restart(unit: string): Promise<number> {
  const r = await call(tp.panel, "units.restart", { input: { host: HOST, name: unit, reason: "watcher test", confirmed: true }, cookie: ada });
  expect(r.status, r.text).toBe(200);
  return (r.json!.result!.data as { auditId: number }).auditId;
}

describe("audit settler on the fleet's agent stream", () => {
  it("learns the agent's machine name and boot from the stream", async () => {
    await expect.poll(() => tp.panel.fleet.get(HOST)?.hostname, { timeout: 5000 }).toBe(agent.hub.hostname);
    expect(tp.panel.fleet.get(HOST)!.bootId).toBe(agent.hub.bootId);
  });

  it("writes the job result into the audit row when the job ends", async () => {
    const id = await restart(EMBED);
    const row = (await tp.panel.auth.audit.getAudit(id))!;
    expect(row.jobId).toBeGreaterThan(0);
    expect(["pending", "done"]).toContain(row.outcome);
    await expect.poll(async () => (await tp.panel.auth.audit.getAudit(id))!.outcome, { timeout: 10_000 }).toBe("done");
  });

  it("survives an agent restart: reconnects, settles orphaned rows, keeps updating outcomes", async () => {
    const host = HOST;
    const oldBoot = tp.panel.fleet.get(HOST)!.bootId;
    // a row whose job will never be reported (it ended while nobody watched)
    const orphan = await tp.panel.auth.audit.recordAudit({
      at: Date.now() - 120_000,
      user: "ada",
      role: "admin",
      sourceAddr: null,
      host,
      unit: QWEN,
      action: "restart",
      reason: null,
      outcome: "pending",
      jobId: 987_654,
    });
    await agent.close();
    await expect.poll(() => tp.panel.fleet.get(HOST)!.error, { timeout: 10_000 }).toMatch(/could not be reached|closed|shutting down/);
    agent = await startTestAgent({ dataDir: agentDir, port });
    await expect.poll(() => tp.panel.fleet.get(HOST)!.bootId, { timeout: 15_000 }).not.toBe(oldBoot);
    expect(tp.panel.fleet.get(HOST)!.bootId).toBe(agent.hub.bootId);
    expect(await tp.panel.auth.audit.getAudit(orphan)).toMatchObject({ outcome: "unknown" });
    const id = await restart(EMBED);
    await expect.poll(async () => (await tp.panel.auth.audit.getAudit(id))!.outcome, { timeout: 10_000 }).toBe("done");
  }, 40_000);
});
