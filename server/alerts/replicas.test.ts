/**
 * Two panel replicas on one PostgreSQL, each with its own engine and deliverer watching the same
 * host: one unit fails → one alert, one message at the receiver; it recovers → one resolution;
 * unacknowledged past its rule's escalateAfter → one escalation, from one replica; acknowledged
 * while another replica sends its start → the acknowledgement is told once, never lost.
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
import { openAlert } from "./alertStore";
import { batchNotifications } from "./batcher";
import { ackAlert, escalateAlert } from "./lifecycle";
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

describe.skipIf(noPg)("two replicas, one escalation", () => {
  it("an alert nobody acknowledges is escalated once, by one replica", async () => {
    const receiver = await new TestReceiver().start();
    const units = new Map([["vllm-a.service", unit("failed", "exit-code")]]);
    const config = loadAlertsConfig({
      GPUDECK_ALERT_CHANNELS: JSON.stringify([
        { type: "webhook", name: "main", url: receiver.url("/main") },
        { type: "webhook", name: "pager", url: receiver.url("/pager") },
      ]),
      GPUDECK_ALERT_RULES: JSON.stringify({ "unit-failed": { escalateAfter: "2s", escalateTo: ["pager"] } }),
    });
    const dbName = `escalate_${process.pid}`;
    const admin = await openStore({ dataDir: dir, databaseUrl: cluster!.url });
    await admin.db.executeQuery({ sql: `create database ${dbName}`, parameters: [], query: { kind: "RawNode" } } as never);
    await admin.close();
    const url = cluster!.url.replace(/\/postgres$/, `/${dbName}`);
    const replicas = [0, 1].map(() => {
      const link = fakeLink(units);
      const store = new LazyStore({ dataDir: dir, databaseUrl: url });
      const service = new AlertsService({
        fleet: { all: () => [link], get: (n) => (n === "gpu-a" ? link : undefined), onHostEvent: (_l: (h: string, e: AgentEvent) => void) => () => undefined },
        store,
        config: { ...config, tickMs: 50, groupWindowMs: 200, settleMs: 0, delivery: { ...config.delivery, pollMs: 50 } },
        panelUrl: "http://panel",
        log: () => {},
      });
      return { service, store };
    });
    try {
      for (const r of replicas) r.service.start();
      const escalations = () => receiver.payloads<AlertWebhookPayload>().filter((p) => p.kind === "escalation");
      await expect.poll(() => escalations().length, { timeout: 15_000 }).toBe(1);
      // both replicas pass every 50 ms: any second claim would have been made by now
      await new Promise((res) => setTimeout(res, 1500));
      expect(escalations()).toHaveLength(1);
      expect(receiver.received.filter((r) => (r.json as AlertWebhookPayload).kind === "escalation").map((r) => r.path)).toEqual(["/pager"]);
      const check = await openStore({ dataDir: dir, databaseUrl: url });
      const rows = await check.db.selectFrom("alerts").select(["id", "escalated_at"]).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.escalated_at).toEqual(expect.any(Number));
      expect(await check.db.selectFrom("alert_messages").select("id").where("state", "=", "escalation").execute()).toHaveLength(1);
      await check.close();
    } finally {
      for (const r of replicas) {
        r.service.stop();
        await r.store.close();
      }
      await receiver.stop();
    }
  }, 30_000);

  it("replicas that claim one escalation at the same moment: one wins, one message", async () => {
    const dbName = `escalate_race_${process.pid}`;
    const admin = await openStore({ dataDir: dir, databaseUrl: cluster!.url });
    await admin.db.executeQuery({ sql: `create database ${dbName}`, parameters: [], query: { kind: "RawNode" } } as never);
    await admin.close();
    const url = cluster!.url.replace(/\/postgres$/, `/${dbName}`);
    const [a, b] = [await openStore({ dataDir: dir, databaseUrl: url }), await openStore({ dataDir: dir, databaseUrl: url })];
    try {
      const id = (await openAlert(
        a,
        { rule: "unit-failed", host: "gpu-a", unit: "vllm-a.service", severity: "critical", summary: "failed", sinceMs: Date.now() },
        { silenced: false, diagnose: false },
      ))!;
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => escalateAlert(i % 2 ? a : b, id, 60_000, ["c1"], "http://panel")));
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect(await a.db.selectFrom("alert_messages").select("id").where("state", "=", "escalation").execute()).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe.skipIf(noPg)("two replicas, an acknowledgement while the start is being sent", () => {
  it("each alert's acknowledgement is told once: in its start's message or in a message of its own", async () => {
    const dbName = `ack_race_${process.pid}`;
    const admin = await openStore({ dataDir: dir, databaseUrl: cluster!.url });
    await admin.db.executeQuery({ sql: `create database ${dbName}`, parameters: [], query: { kind: "RawNode" } } as never);
    await admin.close();
    const url = cluster!.url.replace(/\/postgres$/, `/${dbName}`);
    const [a, b] = [await openStore({ dataDir: dir, databaseUrl: url }), await openStore({ dataDir: dir, databaseUrl: url })];
    try {
      // one host each, so each start is a message of its own; replica b groups while replica a acknowledges
      const ids: number[] = [];
      for (let i = 0; i < 60; i++) {
        const c = {
          rule: "unit-failed" as const,
          host: `gpu-${i}`,
          unit: "vllm-a.service",
          severity: "critical" as const,
          summary: "failed",
          sinceMs: Date.now(),
        };
        ids.push((await openAlert(a, c, { silenced: false, diagnose: false }))!);
      }
      const opts = { windowMs: 0, diagnosisWaitMs: 0, panelUrl: "http://panel", channelIds: async () => ["c1"] };
      const batching = (async () => {
        while ((await batchNotifications(b, opts)) > 0);
      })();
      await Promise.all([batching, ...ids.map((id) => ackAlert(a, id, "alice", null, "http://panel"))]);
      await batchNotifications(b, opts);
      const messages = await a.db.selectFrom("alert_messages").select(["state", "payload"]).execute();
      const told = new Map<number, string[]>();
      for (const m of messages) {
        const p = JSON.parse(m.payload) as AlertWebhookPayload;
        const how = m.state === "acknowledged" ? "ack message" : p.acknowledgedBy ? "start says it" : "start only";
        told.set(p.alertId, [...(told.get(p.alertId) ?? []), how].sort());
      }
      // never "start only" (the acknowledgement lost between the two) nor both
      const wrong = ids.map((id) => [id, (told.get(id) ?? []).join(" + ")]).filter(([, o]) => o !== "start says it" && o !== "ack message + start only");
      expect(wrong).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
