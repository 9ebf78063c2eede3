/**
 * Alerts end to end: a real systemd sandbox with the real agent inside, the real panel in this
 * process (as e2e/fleet/twoHosts.test.ts), and a local HTTP receiver the test brings up and down.
 * Production defaults (5 s grouping window, 5 s tick) except a short retry backoff.
 * - a unit fails → one webhook POST with the unit, the rule and the agent's diagnosis headline,
 *   within 15 s; it recovers → one resolution;
 * - the receiver is down while a unit fails, and the panel is restarted meanwhile → delivered
 *   once the receiver is back, exactly once;
 * - 20 units failing at once → one grouped message.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertWebhookPayload } from "../../server/contract/alerts";
import { TestReceiver } from "../../server/alerts/testing/receiver";
import { loadPanelConfig } from "../../server/panel/config";
import { createPanel, type Panel } from "../../server/panel/instance";
import { hostConnected } from "../../server/panel/panelTestHarness";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "../systemd/agentHarness";

const skip = warnIfUnsupported("alerts end to end (e2e/alerts/alerts.test.ts)");

const HOST = "gpu-e2e";
const FLAKY = "alert-flaky.service";
// fails unless /run/alert-ok exists: the test makes it fail and recover
const FLAKY_UNIT = `[Unit]
Description=Flaky model server
[Service]
ExecStart=/bin/sh -c 'test -e /run/alert-ok || { echo "model weights missing" >&2; exit 3; }; exec sleep infinity'
`;
const BURST = 20;
const burstUnit = (i: number) => `alert-burst-${String(i).padStart(2, "0")}.service`;
const BURST_UNIT = `[Service]
ExecStart=/bin/sh -c 'exit 1'
`;

describe.skipIf(skip)("alerts from a real host", () => {
  let sb: Sandbox;
  let agent: RunningAgent;
  let panel: Panel;
  let dataDir: string;
  const receiver = new TestReceiver();

  const startPanel = () =>
    createPanel(
      loadPanelConfig({
        GPUDECK_DATA_DIR: dataDir,
        GPUDECK_AGENT_URL: agent.url,
        GPUDECK_AGENT_TOKEN: agent.token,
        GPUDECK_AGENT_NAME: HOST,
        GPUDECK_ALERT_WEBHOOK_URL: receiver.url("/gpudeck"),
        GPUDECK_PUBLIC_URL: "https://gpudeck.example",
      }),
      { log: () => {}, fleet: { link: { retryMinMs: 200, retryMaxMs: 1000 } }, alerts: { delivery: { pollMs: 200, backoffBaseMs: 300, backoffMaxMs: 1500 } } },
    );

  const messages = () => receiver.payloads<AlertWebhookPayload>();
  const about = (unit: string) => messages().filter((m) => m.alerts.some((a) => a.unit === unit));

  beforeAll(async () => {
    await receiver.start();
    sb = await Sandbox.boot({ name: "alerts" });
    await sb.writeFile(`/etc/systemd/system/${FLAKY}`, FLAKY_UNIT);
    for (let i = 0; i < BURST; i++) await sb.writeFile(`/etc/systemd/system/${burstUnit(i)}`, BURST_UNIT);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "alert-*.service" });
    dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-alerts-e2e-"));
    panel = await startPanel();
    await hostConnected(panel, HOST, 15_000);
  }, 120_000);

  afterAll(async () => {
    await panel?.close();
    await agent?.stop();
    await sb?.stop();
    await receiver.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("a unit fails: one message with the unit, the rule and the diagnosis headline, within 15 s; it recovers: one resolution", async () => {
    const failedAt = Date.now();
    await sb.systemctl(["start", FLAKY], { check: false });
    await expect.poll(() => about(FLAKY).length, { timeout: 15_000, interval: 100 }).toBe(1);
    console.log(`first message ${Date.now() - failedAt} ms after the unit failed`);
    const m = about(FLAKY)[0]!;
    expect(m).toMatchObject({
      host: HOST,
      unit: FLAKY,
      rule: "unit-failed",
      state: "firing",
      count: 1,
      link: `https://gpudeck.example/hosts/${HOST}/units/${FLAKY}`,
    });
    expect(m.diagnosis?.headline).toBeTruthy();
    expect(m.diagnosis!.headline).toMatch(/exit|status 3|failed/i);
    expect(m.diagnosisUnavailable).toBeNull();

    await sb.writeFile("/run/alert-ok", "");
    await sb.systemctl(["start", FLAKY]);
    await expect.poll(() => about(FLAKY).length, { timeout: 15_000, interval: 100 }).toBe(2);
    expect(about(FLAKY)[1]).toMatchObject({ state: "resolved", unit: FLAKY, rule: "unit-failed" });
    await sleep(2000);
    expect(about(FLAKY)).toHaveLength(2);
  }, 60_000);

  it("the receiver is down while the unit fails and the panel restarts meanwhile: delivered when it is back, exactly once", async () => {
    await receiver.stop();
    await sb.removeFile("/run/alert-ok");
    await sb.systemctl(["restart", FLAKY], { check: false });
    // the message is made and tried (and refused) while the receiver is away
    await expect
      .poll(
        async () => (await panel.services.alerts.deliveries({ limit: 5 })).deliveries.find((d) => d.status === "pending" && d.attempts > 0)?.lastError ?? null,
        { timeout: 20_000, interval: 200 },
      )
      .toMatch(/ECONNREFUSED|refused/i);
    await panel.close();
    await sleep(500);
    panel = await startPanel();
    await expect.poll(() => panel.fleet.get(HOST)?.state, { timeout: 15_000 }).toBe("connected");
    await sleep(1000);
    expect(about(FLAKY)).toHaveLength(2);
    await receiver.start();
    await expect.poll(() => about(FLAKY).length, { timeout: 15_000, interval: 100 }).toBe(3);
    const m = about(FLAKY)[2]!;
    expect(m).toMatchObject({ state: "firing", unit: FLAKY, rule: "unit-failed" });
    await sleep(3000);
    expect(about(FLAKY)).toHaveLength(3);
    expect(new Set(messages().map((x) => x.id)).size).toBe(messages().length);
  }, 90_000);

  it("20 units failing at once: one grouped message", async () => {
    const before = messages().length;
    await sb.systemctl(["start", "--no-block", ...Array.from({ length: BURST }, (_, i) => burstUnit(i))]);
    await expect
      .poll(
        () =>
          messages()
            .slice(before)
            .filter((m) => m.rule === "unit-failed" && m.state === "firing").length,
        { timeout: 20_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(1);
    await sleep(7000);
    const burst = messages()
      .slice(before)
      .filter((m) => m.alerts.some((a) => a.unit?.startsWith("alert-burst-")));
    expect(burst).toHaveLength(1);
    expect(burst[0]).toMatchObject({ title: `host ${HOST}: ${BURST} units failed`, count: BURST, unit: null, rule: "unit-failed" });
    expect(burst[0]!.alerts.map((a) => a.unit).sort()).toEqual(Array.from({ length: BURST }, (_, i) => burstUnit(i)));
    expect(burst[0]!.alerts.every((a) => a.diagnosis?.headline || a.diagnosisUnavailable)).toBe(true);
  }, 60_000);
});
