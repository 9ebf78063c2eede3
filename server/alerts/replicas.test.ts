/**
 * Two panel replicas on one PostgreSQL, each with its own engine and deliverer watching the same
 * host: one unit fails → one alert, one message at the receiver; it recovers → one resolution.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertWebhookPayload } from "../contract/alerts";
import type { AgentEvent } from "../contract/events";
import type { UnitSummary } from "../contract/types";
import type { HostLink } from "../panel/fleet/hostLink";
import { openStore } from "../store/database";
import { LazyStore } from "../store/lazyStore";
import { skipWithoutPg, startPgCluster, type PgCluster } from "../store/testing/pgCluster";
import { loadAlertsConfig } from "./config";
import { AlertsService } from "./service";
import { TestReceiver } from "./testing/receiver";

const noPg = skipWithoutPg("alerts across two replicas on PostgreSQL");
let cluster: PgCluster | null = null;
const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-replicas-"));

beforeAll(async () => {
  if (!noPg) cluster = await startPgCluster();
}, 60_000);
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const unit = (activeState: string, result: string): UnitSummary => ({
  name: "vllm-a.service",
  description: "",
  activeState,
  subState: activeState === "failed" ? "failed" : "running",
  loadState: "loaded",
  unitFileState: "enabled",
  result,
  mainPid: 0,
  controlPid: 0,
  nRestarts: 0,
  stateChangeUsec: (Date.now() - 60_000) * 1000,
  job: null,
});

/** What each replica's HostLink would say about gpu-a: the same state, its own stream. */
function fakeLink(units: Map<string, UnitSummary>) {
  const diagnose = { query: async () => ({ severity: "critical", code: "main-exited", headline: "The main process exited with status 1.", evidence: [] }) };
  return {
    name: "gpu-a",
    state: "connected",
    sinceMs: 0,
    error: null,
    bootId: "b",
    units,
    gpu: null,
    telemetry: null,
    client: { units: { diagnose } },
  } as unknown as HostLink;
}

describe.skipIf(noPg)("two replicas", () => {
  it("open one alert and send one message for one failure, and one for its resolution", async () => {
    const receiver = await new TestReceiver().start();
    const units = new Map([["vllm-a.service", unit("failed", "exit-code")]]);
    const config = loadAlertsConfig({ GPUDECK_ALERT_WEBHOOK_URL: receiver.url("/hook") });
    const replicas = [0, 1].map(() => {
      const link = fakeLink(units);
      const store = new LazyStore({ dataDir: dir, databaseUrl: cluster!.url });
      const service = new AlertsService({
        fleet: { all: () => [link], get: (n) => (n === "gpu-a" ? link : undefined), onHostEvent: (_l: (h: string, e: AgentEvent) => void) => () => undefined },
        store,
        config: { ...config, tickMs: 100, groupWindowMs: 200, settleMs: 0, delivery: { ...config.delivery, pollMs: 50 } },
        panelUrl: "http://panel",
        log: () => {},
      });
      return { service, store };
    });
    try {
      for (const r of replicas) r.service.start();
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
      await new Promise((res) => setTimeout(res, 1000));
      expect(receiver.received).toHaveLength(1);
      const firing = receiver.payloads<AlertWebhookPayload>()[0]!;
      expect(firing).toMatchObject({ unit: "vllm-a.service", state: "firing", diagnosis: { headline: "The main process exited with status 1." } });

      units.set("vllm-a.service", unit("active", "success"));
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(2);
      await new Promise((res) => setTimeout(res, 1000));
      expect(receiver.payloads<AlertWebhookPayload>().map((p) => p.state)).toEqual(["firing", "resolved"]);
      const check = await openStore({ dataDir: dir, databaseUrl: cluster!.url });
      expect(await check.db.selectFrom("alerts").select("id").execute()).toHaveLength(1);
      expect(await check.db.selectFrom("alert_outbox").select("status").execute()).toEqual([{ status: "sent" }, { status: "sent" }]);
      await check.close();
    } finally {
      for (const r of replicas) {
        r.service.stop();
        await r.store.close();
      }
      await receiver.stop();
    }
  }, 30_000);
});
