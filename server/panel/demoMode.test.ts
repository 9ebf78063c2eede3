/**
 * Demo mode has no login (everyone is the demo admin), so it must only ever pair with simulated
 * agents. A "real" agent here is the real agent code on this machine (simulate: false): systemd
 * and nvidia-smi are unreachable in the test environment, but its snapshot says what it is.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAgent, type RunningAgent } from "../agent/main";
import { checkDemoHosts } from "./demoCheck";
import { call, HOST, hostConnected, startTestAgent, startTestPanel, type RpcResult, type TestPanel } from "./panelTestHarness";

const EMBED = "vllm-embed-small.service";
const messageOf = (r: RpcResult) => r.json?.error?.message ?? r.text;

describe("a demo panel in front of a real (not simulated) agent", () => {
  let agent: RunningAgent;
  let tp: TestPanel;
  const agentDir = mkdtempSync(path.join(tmpdir(), "gpudeck-real-agent-"));

  beforeAll(async () => {
    agent = await startAgent({
      host: "127.0.0.1",
      port: 0,
      token: "real-agent-token-0123456789abcdefghijklmn",
      unitGlobs: ["vllm-*.service"],
      nvidiaSmiPath: path.join(agentDir, "no-nvidia-smi"),
      dataDir: agentDir,
      simulate: false,
      gpuIntervalMs: 1000,
    });
    tp = await startTestPanel(agent, { env: { GPUDECK_DEMO: "1" }, panel: { background: true } });
  }, 30_000);

  afterAll(async () => {
    await tp?.close();
    await agent?.close();
    rmSync(agentDir, { recursive: true, force: true });
  });

  it("the start-up check names the real host (serve.ts then refuses to start)", async () => {
    const check = await checkDemoHosts(() => tp.panel.fleet.all(), 10_000);
    expect(check.real).toEqual([
      { name: HOST, url: agent.url, message: expect.stringMatching(/demo mode \(GPUDECK_DEMO\): the agent at .* runs on a real host/) },
    ]);
  });

  it("an unauthenticated units.restart never reaches the agent", async () => {
    const r = await call(tp.panel, "units.restart", { input: { host: HOST, name: EMBED } });
    expect(r.status, r.text).toBe(403);
    expect(messageOf(r)).toMatch(/demo mode .* runs on a real host/);
    const kill = await call(tp.panel, "units.kill", { input: { host: HOST, name: EMBED } });
    expect(kill.status).toBe(403);
    expect(agent.hub.recentActions(1000)).toEqual([]);
  });

  it("nothing of the real host is shown: reads refused, no units, the host down with the reason", async () => {
    const get = await call(tp.panel, "units.get", { method: "GET", input: { host: HOST, name: EMBED } });
    expect(get.status).toBe(403);
    const status = await call(tp.panel, "host.status", { method: "GET", input: { host: HOST } });
    expect(status.status).toBe(403);
    const link = tp.panel.fleet.get(HOST)!;
    expect(link.state).toBe("down");
    expect(link.error).toMatch(/never shows or controls real hosts/);
    expect(link.units.size).toBe(0);
    const list = await call(tp.panel, "units.list", { method: "GET" });
    expect((list.json?.result?.data as { units: unknown[] }).units).toEqual([]);
  });

  it("no host can be added or changed in demo mode", async () => {
    const r = await call(tp.panel, "hosts.add", { input: { name: "gpu-z", url: agent.url, token: "real-agent-token-0123456789abcdefghijklmn" } });
    expect(r.status).toBe(403);
    expect(messageOf(r)).toMatch(/demo panel .* shows only its simulated hosts/);
    expect(tp.panel.fleet.get("gpu-z")).toBeUndefined();
  });
});

describe("a demo panel in front of a simulated agent", () => {
  let agent: RunningAgent;
  let tp: TestPanel;
  beforeAll(async () => {
    agent = await startTestAgent();
    tp = await startTestPanel(agent, { env: { GPUDECK_DEMO: "1" }, panel: { background: false } });
  }, 30_000);
  afterAll(async () => {
    await tp?.close();
    await agent?.close();
  });

  it("refuses actions while the agent has not said it is simulated, then allows them", async () => {
    const before = await call(tp.panel, "units.restart", { input: { host: HOST, name: EMBED } });
    expect(before.status).toBe(403);
    expect(messageOf(before)).toMatch(/demo mode acts only on simulated hosts, and host test-host's agent has not said it is one yet/);
    expect(agent.hub.recentActions(1000)).toEqual([]);
    tp.panel.fleet.start();
    await hostConnected(tp.panel);
    expect((await checkDemoHosts(() => tp.panel.fleet.all(), 1000)).real).toEqual([]);
    const after = await call(tp.panel, "units.restart", { input: { host: HOST, name: EMBED } });
    expect(after.status, after.text).toBe(200);
    expect(agent.hub.recentActions(10)).toMatchObject([{ unit: EMBED, action: "restart", user: "demo" }]);
  });
});

describe("npm start", () => {
  it("refuses GPUDECK_DEMO (it runs this host's real agent)", async () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/run.ts", "start"], {
      env: { ...process.env, GPUDECK_DEMO: "1", GPUDECK_DIST_DIR: ".next-never-built" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/GPUDECK_DEMO is set: `npm start` runs this host's real agent, and demo mode has no login/);
  });
});
