/**
 * One panel, two real GPU hosts: two systemd sandboxes, each with the real agent inside, under
 * one real panel (in this process, through its real /api/trpc endpoint). Both connect; 300
 * browser streams leave each agent with one subscription from the panel; an agent that stops
 * makes its host "down" within 10 s while the other host keeps streaming live transitions; when
 * it starts again the host is connected and its history is continuous.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPanelConfig } from "../../server/panel/config";
import { createPanel, type Panel } from "../../server/panel/instance";
import { addUser, call, decodeSse, login, panelRequest } from "../../server/panel/panelTestHarness";
import { trustPeerHeader } from "../../server/panel/context";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "../systemd/agentHarness";

const skip = warnIfUnsupported("fleet of two real hosts (e2e/fleet/twoHosts.test.ts)");

const UNIT = "fleet-e2e.service";
const UNIT_FILE = `[Service]
ExecStartPre=/bin/sleep 0.3
ExecStart=/bin/sleep infinity
`;

/** Open event streams the agent reports on /metrics. */
async function agentStreams(agent: RunningAgent): Promise<number> {
  const res = await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${agent.token}` } });
  const m = /^gpudeck_agent_event_streams (\d+)$/m.exec(await res.text());
  if (!m) throw new Error("no gpudeck_agent_event_streams on /metrics");
  return Number(m[1]);
}

/** A browser's events.watch stream through the panel's endpoint, read in the background. */
function browserStream(panel: Panel, cookie: string, input: unknown) {
  const ctl = new AbortController();
  let text = "";
  const ready = (async () => {
    const res = await panel.handle(panelRequest("events.watch", { sse: true, input, cookie, headers: {} }));
    if (res.status !== 200) {
      text = `events.watch answered ${res.status}: ${await res.text()}`;
      return;
    }
    const reader = res.body!.getReader();
    ctl.signal.addEventListener("abort", () => void reader.cancel().catch(() => undefined));
    const decoder = new TextDecoder();
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (next.done) return;
      text += decoder.decode(next.value, { stream: true });
    }
  })();
  return {
    ready,
    text: () => decodeSse(text),
    close: () => ctl.abort(),
    async until(pattern: RegExp, timeoutMs = 15_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(decodeSse(text))) {
        if (Date.now() > deadline) throw new Error(`stream did not show ${pattern} within ${timeoutMs} ms:\n${decodeSse(text).slice(-800)}`);
        await sleep(50);
      }
    },
  };
}

describe.skipIf(skip)("a panel over two real hosts", () => {
  let sbA: Sandbox;
  let sbB: Sandbox;
  let agentA: RunningAgent;
  let agentB: RunningAgent;
  let panel: Panel;
  let dataDir: string;
  let cookie: string;
  let baselineA = 0;
  let baselineB = 0;

  beforeAll(async () => {
    [sbA, sbB] = await Promise.all([Sandbox.boot({ name: "fleet-a" }), Sandbox.boot({ name: "fleet-b" })]);
    for (const sb of [sbA, sbB]) {
      await sb.writeFile(`/etc/systemd/system/${UNIT}`, UNIT_FILE);
      await sb.systemctl(["daemon-reload"]);
    }
    [agentA, agentB] = await Promise.all([RunningAgent.start(sbA, { units: "fleet-*.service" }), RunningAgent.start(sbB, { units: "fleet-*.service" })]);
    // the test's own watcher of each agent (the harness) is one stream; the panel adds exactly one
    baselineA = await agentStreams(agentA);
    baselineB = await agentStreams(agentB);
    dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-fleet-panel-"));
    const agentsFile = path.join(dataDir, "agents.json");
    writeFileSync(
      agentsFile,
      JSON.stringify([
        { name: "gpu-a", url: agentA.url, token: agentA.token },
        { name: "gpu-b", url: agentB.url, token: agentB.token },
      ]),
    );
    trustPeerHeader(true);
    // 300 streams on one session: above the default per-session limit (16), which is not what this measures
    panel = await createPanel(
      loadPanelConfig({ GPUDECK_DATA_DIR: dataDir, GPUDECK_AGENTS_FILE: agentsFile, GPUDECK_STREAMS_PER_SESSION: "400", GPUDECK_STREAMS_PER_USER: "400" }),
      {
        log: () => {},
        refusalAuditPerMinute: 10_000,
        fleet: { link: { retryMinMs: 200, retryMaxMs: 1000 } },
      },
    );
    await addUser(panel, "ada", "admin");
    cookie = await login(panel, "ada");
  }, 120_000);

  afterAll(async () => {
    await panel?.close();
    await Promise.allSettled([agentA?.stop(), agentB?.stop()]);
    await Promise.allSettled([sbA?.stop(), sbB?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("connects to both hosts and lists both in hosts.list", async () => {
    await expect.poll(() => panel.fleet.summaries().map((h) => h.state), { timeout: 15_000 }).toEqual(["connected", "connected"]);
    const r = await call(panel, "hosts.list", { method: "GET", cookie });
    expect(r.status, r.text).toBe(200);
    const hosts = r.json!.result!.data as { name: string; state: string; unitCounts: Record<string, number> }[];
    expect(hosts.map((h) => [h.name, h.state])).toEqual([
      ["gpu-a", "connected"],
      ["gpu-b", "connected"],
    ]);
    expect(hosts[0]!.unitCounts).toEqual({ inactive: 1 });
  });

  it("300 browser streams leave each agent with one subscription from the panel", async () => {
    const streams = Array.from({ length: 300 }, (_, i) =>
      browserStream(panel, cookie, i % 3 === 0 ? { watch: "fleet" } : { watch: "host", host: i % 3 === 1 ? "gpu-a" : "gpu-b" }),
    );
    await Promise.all(streams.map((s) => s.until(/"kind":"(fleet|host)-snapshot"/)));
    expect(panel.fleet.viewerCount()).toBe(300);
    expect(await agentStreams(agentA)).toBe(baselineA + 1);
    expect(await agentStreams(agentB)).toBe(baselineB + 1);
    for (const s of streams) s.close();
    await expect.poll(() => panel.fleet.viewerCount(), { timeout: 10_000 }).toBe(0);
  }, 60_000);

  it("an agent that stops makes its host down within 10 s; the other host keeps streaming live transitions; back, its history is continuous", async () => {
    const viewB = browserStream(panel, cookie, { watch: "unit", host: "gpu-b", name: UNIT });
    const viewA = browserStream(panel, cookie, { watch: "host", host: "gpu-a" });
    await viewB.until(/"kind":"host-snapshot"/);
    await viewA.until(/"kind":"host-snapshot"/);
    // a transition on gpu-a before the agent goes away
    await sbA.systemctl(["start", UNIT]);
    await viewA.until(/"transition".*"activeState":"active","subState":"running"/);

    const port = Number(new URL(agentA.url).port);
    const token = agentA.token;
    const stoppedAt = Date.now();
    await agentA.stop();
    await expect.poll(() => panel.fleet.get("gpu-a")!.state, { timeout: 10_000, interval: 100 }).toBe("down");
    const downAfterMs = Date.now() - stoppedAt;
    console.log(`gpu-a shown down ${downAfterMs} ms after its agent stopped: ${panel.fleet.get("gpu-a")!.error}`);
    await viewA.until(/"kind":"hosts".*"name":"gpu-a","state":"down"/);

    // the other host is not blocked: its unit goes through start-pre to running, live
    await sbB.systemctl(["start", "--no-block", UNIT]);
    await viewB.until(/"subState":"start-pre"/);
    await viewB.until(/"transition".*"activeState":"active","subState":"running"/);

    // meanwhile on gpu-a (no agent): the unit is restarted by hand
    await sbA.systemctl(["restart", UNIT]);
    agentA = await RunningAgent.start(sbA, { units: "fleet-*.service", port, token });
    await expect.poll(() => panel.fleet.get("gpu-a")!.state, { timeout: 15_000, interval: 100 }).toBe("connected");
    await viewA.until(/"kind":"host-snapshot".*"state":"connected"/);

    // history continuous: the timeline through the panel has the start before the gap, the
    // restart made while no agent ran (rebuilt from systemd's timestamps) and the span it missed
    const r = await call(panel, "units.timeline", { method: "GET", input: { host: "gpu-a", name: UNIT }, cookie });
    expect(r.status, r.text).toBe(200);
    const timeline = r.json!.result!.data as { transitions: { to: { activeState: string }; atUsec: number }[]; unobserved: { fromMs: number; toMs: number }[] };
    const states = timeline.transitions.map((t) => t.to.activeState);
    expect(states.filter((s) => s === "active").length).toBeGreaterThanOrEqual(2);
    expect(states).toContain("inactive");
    expect(timeline.unobserved.length).toBeGreaterThanOrEqual(1);
    viewA.close();
    viewB.close();
  }, 90_000);
});
