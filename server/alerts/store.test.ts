/**
 * Alert state, grouping and the outbox on both databases, with two "replicas" (two handles on one
 * database) doing the same work at once: one alert, one message, one delivery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AlertWebhookPayload } from "../contract/alerts";
import { openStore, type Store } from "../store/database";
import { LazyStore } from "../store/lazyStore";
import { skipWithoutPg, startPgCluster, type PgCluster } from "../store/testing/pgCluster";
import { openAlert, openAlertRows, releaseSilenced, resolveAlert, setDiagnosis } from "./alertStore";
import { batchNotifications } from "./batcher";
import { ChannelStore } from "./channels";
import type { Condition } from "./conditions";
import { backoffMs, Deliverer } from "./deliverer";
import { claimHead, enqueueMessage, listDeliveries, pendingHeads } from "./outbox";
import { testPayload } from "./message";
import { TestReceiver } from "./testing/receiver";

const noPg = skipWithoutPg("the alert store's PostgreSQL tests");
let cluster: PgCluster | null = null;
const dirs: string[] = [];

beforeAll(async () => {
  if (!noPg) cluster = await startPgCluster();
}, 60_000);
afterAll(() => {
  cluster?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

let pgDb = 0;
/** Two handles on one fresh database. */
async function twoReplicas(dialect: "sqlite" | "postgres"): Promise<[Store, Store]> {
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-alerts-"));
  dirs.push(dir);
  // SQLite serves one panel process (replicas need PostgreSQL): its "two replicas" are two
  // concurrent callers on the process's one handle
  if (dialect === "sqlite") {
    const one = await openStore({ dataDir: dir });
    return [one, { ...one, close: async () => undefined }];
  }
  const admin = await openStore({ dataDir: dir, databaseUrl: cluster!.url });
  const name = `alerts_${process.pid}_${++pgDb}`;
  await admin.db.executeQuery({ sql: `create database ${name}`, parameters: [], query: { kind: "RawNode" } } as never);
  await admin.close();
  const url = cluster!.url.replace(/\/postgres$/, `/${name}`);
  const a = await openStore({ dataDir: dir, databaseUrl: url });
  const b = await openStore({ dataDir: dir, databaseUrl: url });
  return [a, b];
}

const failed = (unit: string, host = "gpu-b"): Condition => ({
  rule: "unit-failed",
  host,
  unit,
  severity: "critical",
  summary: `${unit} failed (exit-code).`,
  sinceMs: 1000,
});

const dialects = noPg ? (["sqlite"] as const) : (["sqlite", "postgres"] as const);

describe.each(dialects)("alerts on %s", (dialect) => {
  let a: Store;
  let b: Store;
  beforeEach(async () => {
    [a, b] = await twoReplicas(dialect);
    return async () => {
      await a.close();
      await b.close();
    };
  });

  it("two replicas that see one unit fail open one alert, and resolving it is told once", async () => {
    const ids = await Promise.all([
      openAlert(a, failed("x.service"), { silenced: false, diagnose: true }),
      openAlert(b, failed("x.service"), { silenced: false, diagnose: true }),
    ]);
    expect(ids.filter((id) => id !== null)).toHaveLength(1);
    expect(await openAlertRows(a.db)).toHaveLength(1);
    const id = ids.find((i) => i !== null)!;
    const resolved = await Promise.all([resolveAlert(a, id), resolveAlert(b, id)]);
    expect(resolved.filter(Boolean)).toHaveLength(1);
    const notes = await a.db.selectFrom("alert_notifications").select(["state"]).orderBy("id").execute();
    expect(notes.map((n) => n.state)).toEqual(["firing", "resolved"]);
    // after it is resolved, the same unit failing again is a new alert
    expect(await openAlert(a, failed("x.service"), { silenced: false, diagnose: true })).not.toBeNull();
  });

  it("a silenced alert is not told; when the silence ends while it is open, its start is told once", async () => {
    const id = (await openAlert(a, failed("y.service"), { silenced: true, diagnose: false }))!;
    expect(await a.db.selectFrom("alert_notifications").selectAll().execute()).toHaveLength(0);
    const released = await Promise.all([releaseSilenced(a, id), releaseSilenced(b, id)]);
    expect(released.filter(Boolean)).toHaveLength(1);
    expect(await a.db.selectFrom("alert_notifications").select("state").execute()).toEqual([{ state: "firing" }]);
  });

  it("20 units failing at once become one message per channel, made by one replica", async () => {
    for (let i = 0; i < 20; i++) await openAlert(a, failed(`u${String(i).padStart(2, "0")}.service`), { silenced: false, diagnose: true });
    const opts = { windowMs: 0, diagnosisWaitMs: 60_000, panelUrl: "http://panel", channelIds: async () => ["ch-a", "ch-b"] };
    // diagnoses pending: the group waits for them (up to diagnosisWaitMs)
    expect(await batchNotifications(a, opts)).toBe(0);
    for (const row of await openAlertRows(a.db)) await setDiagnosis(a.db, row.id, { unavailable: "the agent did not answer within 5 s" });
    const made = await Promise.all([batchNotifications(a, opts), batchNotifications(b, opts)]);
    expect(made[0] + made[1]).toBe(1);
    const messages = await a.db.selectFrom("alert_messages").selectAll().execute();
    expect(messages).toHaveLength(1);
    const p = JSON.parse(messages[0]!.payload) as AlertWebhookPayload;
    expect(p.title).toBe("host gpu-b: 20 units failed");
    expect(p.alerts).toHaveLength(20);
    expect(p.alerts[0]!.diagnosisUnavailable).toBe("the agent did not answer within 5 s");
    expect(await a.db.selectFrom("alert_outbox").select("channel_id").orderBy("channel_id").execute()).toEqual([
      { channel_id: "ch-a" },
      { channel_id: "ch-b" },
    ]);
  });

  it("the outbox: one replica claims a channel's oldest message; the next waits behind it; a lapsed lease is claimed again", async () => {
    const now = await a.nowMs();
    const first = await enqueueMessage(
      a.db,
      { kind: "test", host: null, rule: null, state: "firing", payload: (id) => testPayload(id, "c", "http://p", now) },
      ["ch-a"],
      now,
    );
    await enqueueMessage(
      a.db,
      { kind: "test", host: null, rule: null, state: "firing", payload: (id) => testPayload(id, "c", "http://p", now) },
      ["ch-a"],
      now,
    );
    const heads = await pendingHeads(a.db);
    expect(heads).toHaveLength(1);
    const head = heads[0]!.head;
    const claims = await Promise.all([claimHead(a.db, a.dialect, head, now, 60_000), claimHead(b.db, b.dialect, head, now, 60_000)]);
    const won = claims.filter((c) => c !== null);
    expect(won).toHaveLength(1);
    expect(won[0]!.message_id).toBe(first);
    expect(won[0]!.attempts).toBe(1);
    // while held, nobody else gets it; once the lease lapsed (a replica died mid-send), someone does
    expect(await claimHead(b.db, b.dialect, head, now + 1000, 60_000)).toBeNull();
    expect(await claimHead(b.db, b.dialect, head, now + 61_000, 60_000)).toMatchObject({ attempts: 2 });
  });

  it("delivery: a receiver that is down gets the message when it is back, exactly once, after backoff", async () => {
    const receiver = await new TestReceiver().start();
    const url = receiver.url("/hook");
    await receiver.stop();
    const lazy = new LazyStore({ dataDir: "unused" });
    (lazy as unknown as { get: () => Promise<Store> }).get = async () => a;
    const channels = new ChannelStore(async () => a, []);
    await channels.add({ type: "webhook", name: "hook", url }, "ada", await a.nowMs());
    const [channel] = await channels.all();
    const timings = { pollMs: 50, backoffBaseMs: 100, backoffMaxMs: 400, giveUpAfterMs: 3_600_000, ratePerMinute: 100, leaseMs: 5000 };
    const deliverer = new Deliverer(lazy, channels, timings, () => {});
    const now = await a.nowMs();
    await a.db
      .transaction()
      .execute((trx) =>
        enqueueMessage(
          trx,
          { kind: "test", host: null, rule: null, state: "firing", payload: (id) => testPayload(id, "hook", "http://p", now) },
          [channel!.id],
          now,
        ),
      );
    deliverer.start();
    try {
      await expect.poll(async () => (await listDeliveries(a.db, { limit: 5 })).deliveries[0]!.attempts, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
      const failing = (await listDeliveries(a.db, { limit: 5 })).deliveries[0]!;
      expect(failing).toMatchObject({ status: "pending" });
      expect(failing.lastError).toMatch(/ECONNREFUSED/);
      await receiver.start();
      await expect.poll(async () => (await listDeliveries(a.db, { limit: 5 })).deliveries[0]!.status, { timeout: 5000 }).toBe("sent");
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received).toHaveLength(1);
      expect((receiver.received[0]!.json as AlertWebhookPayload).kind).toBe("test");
    } finally {
      deliverer.stop();
      await receiver.stop();
    }
  });

  it("delivery gives up after giveUpAfterMs and says so in the log", async () => {
    const lazy = new LazyStore({ dataDir: "unused" });
    (lazy as unknown as { get: () => Promise<Store> }).get = async () => a;
    const channels = new ChannelStore(async () => a, []);
    const ch = await channels.add({ type: "webhook", name: "dead", url: "http://127.0.0.1:1/hook" }, "ada", await a.nowMs());
    const logs: string[] = [];
    const deliverer = new Deliverer(
      lazy,
      channels,
      { pollMs: 50, backoffBaseMs: 50, backoffMaxMs: 50, giveUpAfterMs: 300, ratePerMinute: 100, leaseMs: 5000 },
      (m) => logs.push(m),
    );
    const now = await a.nowMs();
    await enqueueMessage(
      a.db,
      { kind: "test", host: null, rule: null, state: "firing", payload: (id) => testPayload(id, "dead", "http://p", now) },
      [ch.id],
      now,
    );
    deliverer.start();
    try {
      await expect.poll(async () => (await listDeliveries(a.db, { limit: 5 })).deliveries[0]!.status, { timeout: 5000 }).toBe("failed");
      expect(logs.some((l) => /gave up on message/.test(l))).toBe(true);
      expect(logs.join("\n")).not.toContain("127.0.0.1:1/hook");
    } finally {
      deliverer.stop();
    }
  });
});

it("backoff doubles from the base up to the cap, with a little jitter", () => {
  const t = { backoffBaseMs: 10_000, backoffMaxMs: 600_000 };
  expect([1, 2, 3, 4].map((n) => backoffMs(n, t, () => 0.5))).toEqual([10_000, 20_000, 40_000, 80_000]);
  expect(backoffMs(30, t, () => 0.5)).toBe(600_000);
  expect(backoffMs(1, t, () => 0)).toBe(9000);
  expect(backoffMs(1, t, () => 1)).toBe(11_000);
});
