/**
 * Acknowledge and escalate, on SQLite with the engine's real passes over a fake host and a fake
 * clock (the store's "database clock" is the test's): an acknowledgement is one per alert (the
 * first wins) and tells the channels its start went to; an alert unacknowledged for its rule's
 * escalateAfter goes to escalateTo once, not before and never again; an acknowledged one never.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AlertWebhookPayload } from "../contract/alerts";
import type { AgentEvent } from "../contract/events";
import type { UnitSummary } from "../contract/types";
import type { HostLink } from "../panel/fleet/hostLink";
import { openStore, type Store } from "../store/database";
import type { LazyStore } from "../store/lazyStore";
import type { AlertRow } from "./alertStore";
import { loadAlertsConfig } from "./config";
import { AckError, escalateAlert, escalationDueAt } from "./lifecycle";
import { textLines } from "./message";
import { AlertsService } from "./service";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const MIN = 60_000;
const T0 = Date.UTC(2030, 0, 1, 3, 0);

const failedUnit = (name: string): UnitSummary => ({
  name,
  description: "",
  activeState: "failed",
  subState: "failed",
  loadState: "loaded",
  unitFileState: "enabled",
  result: "exit-code",
  mainPid: 0,
  controlPid: 0,
  nRestarts: 0,
  stateChangeUsec: (T0 - MIN) * 1000,
  job: null,
});

async function setup(rules: unknown, opts: { groupWindowMs?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-lifecycle-"));
  dirs.push(dir);
  const real = await openStore({ dataDir: dir });
  const clock = { now: T0 };
  /** run once at the next read of the database's clock (what another replica does meanwhile) */
  const atNextClockRead: { fn: (() => Promise<unknown>) | null } = { fn: null };
  const store: Store = {
    ...real,
    nowMs: async () => {
      const fn = atNextClockRead.fn;
      atNextClockRead.fn = null;
      await fn?.();
      return clock.now;
    },
  };
  const units = new Map([["vllm-a.service", failedUnit("vllm-a.service")]]);
  const diagnose = { query: async () => ({ severity: "critical", code: "main-exited", headline: "It exited.", evidence: [] }) };
  const link = { name: "gpu-a", state: "connected", sinceMs: 0, error: null, bootId: "b", units, gpu: null, telemetry: null, client: { units: { diagnose } } };
  const config = loadAlertsConfig({
    GPUDECK_ALERT_CHANNELS: JSON.stringify([
      { type: "webhook", name: "main", url: "https://main.example/hook" },
      { type: "webhook", name: "pager", url: "https://pager.example/hook" },
    ]),
    GPUDECK_ALERT_RULES: JSON.stringify(rules),
  });
  const sent: { channel: string; payload: AlertWebhookPayload }[] = [];
  const service = new AlertsService({
    fleet: {
      all: () => [link as unknown as HostLink],
      get: (n) => (n === "gpu-a" ? (link as unknown as HostLink) : undefined),
      onHostEvent: (_l: (h: string, e: AgentEvent) => void) => () => undefined,
    },
    store: { get: async () => store } as unknown as LazyStore,
    config: { ...config, settleMs: 0, groupWindowMs: opts.groupWindowMs ?? 0 },
    panelUrl: "https://panel.example",
    log: () => {},
    clock: () => clock.now,
    send: async (channel, payload) => void sent.push({ channel: channel.name, payload }),
  });
  // started (it diagnoses only then); its own tick is 5 s, the test's passes come first
  service.start();
  /**
   * engine passes until what they noted is grouped into messages (the diagnosis they asked for is
   * in); `inWindow`: until the diagnosis is in, the notification still waiting for its window
   */
  const pass = async (inWindow = false) => {
    for (let i = 0; i < 50; i++) {
      await service.engine.passNow();
      const waiting = await real.db.selectFrom("alert_notifications").select("id").where("message_id", "is", null).execute();
      const diagnosing = await real.db.selectFrom("alerts").select("id").where("diagnosis_state", "=", "pending").execute();
      if ((inWindow ? waiting.length > 0 : waiting.length === 0) && diagnosing.length === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("the engine did not settle");
  };
  const messages = async () =>
    (
      await real.db
        .selectFrom("alert_outbox as o")
        .innerJoin("alert_messages as m", "m.id", "o.message_id")
        .select(["o.channel_id", "m.payload"])
        .orderBy("o.id")
        .execute()
    ).map((r) => ({ channel: r.channel_id, payload: JSON.parse(r.payload) as AlertWebhookPayload }));
  const channelName = async (id: string) => (await service.channels.get(id))!.name;
  const close = async () => {
    service.stop();
    await service.engine.passNow(); // the pass under way, if any, is done
    await new Promise((r) => setTimeout(r, 100)); // and the deliverer's look
    await real.close();
  };
  return { service, clock, pass, messages, channelName, real, store, units, atNextClockRead, close };
}

describe("acknowledge", () => {
  it("the first acknowledgement wins, tells the channels its start went to, and a resolved alert cannot be acknowledged", async () => {
    const t = await setup({});
    try {
      await t.pass();
      const firing = await t.messages();
      expect(firing.map((m) => m.payload.kind)).toEqual(["alert", "alert"]);
      const id = firing[0]!.payload.alertId;

      t.clock.now += 2 * MIN;
      const { alert, messageId } = await t.service.ack(id, "alice", "on it, rolling back the weights");
      expect(alert).toMatchObject({ acknowledgedBy: "alice", acknowledgedAt: T0 + 2 * MIN, ackNote: "on it, rolling back the weights" });
      expect(messageId).not.toBeNull();
      const acks = (await t.messages()).filter((m) => m.payload.kind === "acknowledged");
      expect(await Promise.all(acks.map((m) => t.channelName(m.channel)))).toEqual(["main", "pager"]);
      expect(acks[0]!.payload).toMatchObject({
        title: "Acknowledged: gpu-a: vllm-a.service failed",
        summary: "alice acknowledged it: on it, rolling back the weights",
        acknowledgedBy: "alice",
        state: "firing",
      });

      await expect(t.service.ack(id, "bob", null)).rejects.toThrow(/acknowledged already by alice/);
      await expect(t.service.ack(id + 99, "bob", null)).rejects.toMatchObject({ code: "NOT_FOUND" });

      // the unit recovers: resolved, and the acknowledgement stays as history
      t.units.set("vllm-a.service", { ...failedUnit("vllm-a.service"), activeState: "active", subState: "running", result: "success" });
      await t.pass();
      const row = await t.real.db.selectFrom("alerts").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      expect(row.resolved_at).not.toBeNull();
      expect(row.acknowledged_by).toBe("alice");
      const err = await t.service.ack(id, "bob", null).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AckError);
      expect((err as AckError).code).toBe("CONFLICT");
      expect((err as AckError).message).toMatch(/resolved already/);
    } finally {
      await t.close();
    }
  });
});

describe("acknowledged inside the grouping window, before its start was sent", () => {
  const rules = { "unit-failed": { escalateAfter: "10m", escalateTo: ["pager"] } };

  it("the start still goes to the regular channels and says who acknowledged it, when and why; the escalation channel hears nothing", async () => {
    const t = await setup(rules, { groupWindowMs: 5000 });
    try {
      await t.pass(true);
      expect(await t.messages()).toEqual([]);
      const { id } = await t.real.db.selectFrom("alerts").select("id").executeTakeFirstOrThrow();

      t.clock.now += 2000;
      const { alert, messageId } = await t.service.ack(id, "alice", "rolling back the weights");
      expect(alert).toMatchObject({ acknowledgedBy: "alice", acknowledgedAt: T0 + 2000 });
      // nobody was told of it yet: its start, when it goes, says both
      expect(messageId).toBeNull();

      t.clock.now += 3000;
      await t.pass();
      const sent = await t.messages();
      expect(await Promise.all(sent.map(async (m) => [m.payload.kind, m.payload.state, await t.channelName(m.channel)]))).toEqual([
        ["alert", "firing", "main"],
      ]);
      const start = sent[0]!.payload;
      const ackedAt = new Date(T0 + 2000).toISOString();
      expect(start).toMatchObject({ alertId: id, acknowledgedBy: "alice", acknowledgedAt: ackedAt, ackNote: "rolling back the weights" });
      expect(start.alerts[0]).toMatchObject({ acknowledgedBy: "alice", acknowledgedAt: ackedAt });
      expect(textLines(start)).toContain(`Already acknowledged by alice at ${ackedAt}: rolling back the weights`);

      // acknowledged before escalateAfter: the pager never hears of it, and nothing repeats
      t.clock.now += 30 * MIN;
      await t.pass();
      expect((await t.messages()).map((m) => m.payload.kind)).toEqual(["alert"]);
    } finally {
      await t.close();
    }
  });
});

describe("escalate", () => {
  const rules = { "unit-failed": { escalateAfter: "10m", escalateTo: ["pager"] } };

  it("unacknowledged after escalateAfter: sent to escalateTo once, saying so; not before, never again", async () => {
    const t = await setup(rules);
    try {
      await t.pass();
      const before = (await t.messages()).length;
      t.clock.now += 9 * MIN + 59_000;
      await t.pass();
      expect((await t.messages()).length).toBe(before);

      t.clock.now += 1000;
      await t.pass();
      const esc = (await t.messages()).filter((m) => m.payload.kind === "escalation");
      expect(esc).toHaveLength(1);
      expect(await t.channelName(esc[0]!.channel)).toBe("pager");
      expect(esc[0]!.payload.title).toBe("Not acknowledged: gpu-a: vllm-a.service failed");
      expect(esc[0]!.payload.summary).toMatch(/^Not acknowledged after 10 min: /);

      t.clock.now += 60 * MIN;
      await t.pass();
      expect((await t.messages()).filter((m) => m.payload.kind === "escalation")).toHaveLength(1);
      // an escalated alert can still be acknowledged
      const id = esc[0]!.payload.alertId;
      expect((await t.service.ack(id, "bob", null)).alert.escalatedAt).toBe(T0 + 10 * MIN);
    } finally {
      await t.close();
    }
  });

  it("escalated by another replica just as it is acknowledged: the escalation channel hears who took it", async () => {
    const t = await setup(rules);
    try {
      await t.pass();
      const id = (await t.messages())[0]!.payload.alertId;
      const pager = (await t.service.channels.all()).find((c) => c.name === "pager")!.id;
      t.clock.now += 10 * MIN;
      // the other replica's engine claims the escalation after this ack began, before its UPDATE
      t.atNextClockRead.fn = () => escalateAlert(t.store, id, 10 * MIN, [pager], "https://panel.example");
      const { alert } = await t.service.ack(id, "alice", null);
      expect(alert.escalatedAt).toBe(T0 + 10 * MIN);
      const sent = await Promise.all((await t.messages()).map(async (m) => [m.payload.kind, await t.channelName(m.channel)]));
      expect(sent).toEqual([
        ["alert", "main"],
        ["escalation", "pager"],
        ["acknowledged", "main"],
        ["acknowledged", "pager"],
      ]);
    } finally {
      await t.close();
    }
  });

  it("acknowledged before escalateAfter: never escalates", async () => {
    const t = await setup(rules);
    try {
      await t.pass();
      const id = (await t.messages())[0]!.payload.alertId;
      t.clock.now += 5 * MIN;
      await t.service.ack(id, "alice", null);
      t.clock.now += 30 * MIN;
      await t.pass();
      // the start and the acknowledgement went to main only: pager (the rule's escalateTo) hears
      // an alert once it is escalated, and this one never was
      const sent = await Promise.all((await t.messages()).map(async (m) => [m.payload.kind, await t.channelName(m.channel)]));
      expect(sent).toEqual([
        ["alert", "main"],
        ["acknowledged", "main"],
      ]);
      expect((await t.messages()).find((m) => m.payload.kind === "acknowledged")!.payload.summary).toBe("alice acknowledged it.");
    } finally {
      await t.close();
    }
  });

  it("escalationDueAt: only for told, open, unacknowledged, unescalated alerts whose rule escalates", () => {
    const row = { opened_at: 1000, resolved_at: null, acknowledged_at: null, escalated_at: null, fire_queued: 1 } as AlertRow;
    const s = { escalateAfterMs: 600_000, escalateTo: ["pager"] };
    expect(escalationDueAt(row, s)).toBe(601_000);
    expect(escalationDueAt(row, null)).toBeNull();
    expect(escalationDueAt(row, { escalateAfterMs: null, escalateTo: [] })).toBeNull();
    expect(escalationDueAt({ ...row, acknowledged_at: 2000 }, s)).toBeNull();
    expect(escalationDueAt({ ...row, escalated_at: 2000 }, s)).toBeNull();
    expect(escalationDueAt({ ...row, resolved_at: 2000 }, s)).toBeNull();
    expect(escalationDueAt({ ...row, fire_queued: 0 }, s)).toBeNull();
  });
});
