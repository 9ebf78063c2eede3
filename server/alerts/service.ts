/**
 * Alerts as the panel's procedures use them: the engine (rules → alerts), the channel store,
 * the outbox and its deliverer, silences. One per panel process (../panel/instance.ts), started
 * with the fleet; every replica runs one, and the database keeps them from doing anything twice.
 */
import type { AddChannelInput, AddSilenceInput, ChannelView, UpdateChannelInput } from "../contract/alerts";
import type { LazyStore } from "../store/lazyStore";
import type { CreateMaintenanceInput, MaintenanceWindowView } from "../contract/maintenance";
import { listAlerts, type AlertFilter } from "./alertStore";
import { ChannelConfigError, ChannelStore, channelView, type Channel } from "./channels";
import type { AlertsConfig } from "./config";
import { Deliverer, type SendFn } from "./deliverer";
import { AlertEngine, type FleetView } from "./engine";
import { ackAlert } from "./lifecycle";
import { createWindow, dbWindows, endWindow, windowView, type MaintenanceWindow } from "./maintenance";
import { testPayload } from "./message";
import { enqueueMessage, lastAttempts, listDeliveries } from "./outbox";
import { sendTo } from "./senders";
import { escalationChannelIds, escalationNames } from "./routing";
import { describeRules } from "./rules";
import { addSilence, endSilence, listSilences } from "./silences";

export interface AlertsServiceOptions {
  fleet: FleetView;
  store: LazyStore;
  config: AlertsConfig;
  /** base of the links in messages (GPUDECK_PUBLIC_URL) */
  panelUrl: string;
  log: (msg: string) => void;
  clock?: () => number;
  /** tests: instead of the real senders */
  send?: SendFn;
  /** Web Push (server/push/): its channels, the per-device ones by id, and its sender */
  push?: PushChannels;
}

/** What the alert delivery needs of the push service (server/push/service.ts fits). */
export interface PushChannels {
  /** "push" (everyone's own devices) and "push:<group>": listed like channels from the config */
  channels(): Channel[];
  /** a subscribed device's channel ("psub-<id>"), or null */
  resolve(id: string): Promise<Channel | null>;
  send: SendFn;
}

export { ChannelConfigError };

export class AlertsService {
  readonly channels: ChannelStore;
  readonly deliverer: Deliverer;
  readonly engine: AlertEngine;

  constructor(private readonly o: AlertsServiceOptions) {
    const push = o.push;
    this.channels = new ChannelStore(
      () => o.store.get(),
      [...o.config.channels, ...(push?.channels() ?? [])],
      undefined,
      push ? (id) => push.resolve(id) : undefined,
    );
    const send = o.send ?? sendTo;
    this.deliverer = new Deliverer(
      o.store,
      this.channels,
      o.config.delivery,
      o.log,
      push ? (c, p, s) => (c.type === "push" ? push.send(c, p, s) : send(c, p, s)) : send,
    );
    this.engine = new AlertEngine({
      fleet: o.fleet,
      store: o.store,
      channels: this.channels,
      deliverer: this.deliverer,
      config: o.config,
      panelUrl: o.panelUrl,
      log: o.log,
      clock: o.clock,
    });
  }

  start(): void {
    this.engine.start();
  }

  stop(): void {
    this.engine.stop();
  }

  private async store() {
    return this.o.store.get();
  }

  async list(filter: AlertFilter) {
    return listAlerts((await this.store()).db, filter);
  }

  rules() {
    return describeRules(this.o.config.rules);
  }

  async channelViews(): Promise<ChannelView[]> {
    const [channels, last] = await Promise.all([this.channels.all(), (async () => lastAttempts((await this.store()).db))()]);
    const escalation = escalationNames(this.o.config.rules);
    return channels.map((c) => ({ ...channelView(c, last.get(c.id) ?? null), escalationOnly: escalation.has(c.name) }));
  }

  async addChannel(input: AddChannelInput, by: string): Promise<ChannelView> {
    const store = await this.store();
    return channelView(await this.channels.add(input, by, await store.nowMs()), null);
  }

  async updateChannel(input: UpdateChannelInput): Promise<ChannelView> {
    const store = await this.store();
    return channelView(await this.channels.update(input, await store.nowMs()), null);
  }

  async removeChannel(id: string): Promise<Channel> {
    return this.channels.remove(id);
  }

  /** Queue a test message for one channel; the delivery log shows how it went (nothing here waits on the receiver). */
  async testChannel(id: string): Promise<{ channel: Channel; messageId: number }> {
    const channel = await this.channels.get(id);
    if (!channel) throw new ChannelConfigError("There is no such channel.");
    if (!channel.enabled) throw new ChannelConfigError(`Channel ${channel.name} is disabled; enable it to test it.`);
    const store = await this.store();
    const now = await store.nowMs();
    const messageId = await store.db
      .transaction()
      .execute((trx) =>
        enqueueMessage(
          trx,
          { kind: "test", host: null, rule: null, state: "firing", payload: (mid) => testPayload(mid, channel.name, this.o.panelUrl, now) },
          [channel.id],
          now,
        ),
      );
    this.deliverer.kick();
    return { channel, messageId };
  }

  async deliveries(filter: { channelId?: string; cursor?: number | null; limit: number }) {
    return listDeliveries((await this.store()).db, filter);
  }

  async silences() {
    const store = await this.store();
    return listSilences(store.db, await store.nowMs());
  }

  async addSilence(input: AddSilenceInput, by: string) {
    const store = await this.store();
    return addSilence(store.db, input, by, await store.nowMs());
  }

  /** "I'm on it": the first acknowledgement wins; a message goes to the channels its start (and its escalation) went to. */
  async ack(id: number, by: string, note: string | null) {
    // the channel list first (read outside the transaction: on SQLite it holds the one
    // connection); whether and where it was escalated, of the row ackAlert's UPDATE returns
    const channels = await this.channels.all();
    const result = await ackAlert(await this.store(), id, by, note, this.o.panelUrl, (alert) => escalationChannelIds(channels, this.o.config.rules, alert));
    if (result.messageId !== null) this.deliverer.kick();
    return result;
  }

  async alert(id: number) {
    const row = await (await this.store()).db.selectFrom("alerts").selectAll().where("id", "=", id).executeTakeFirst();
    return row ?? null;
  }

  /** The config file's windows and the database's (those that may still hold, and the last 30 days'). */
  async maintenanceWindows(): Promise<MaintenanceWindow[]> {
    const store = await this.store();
    return [...this.o.config.maintenance, ...(await dbWindows(store.db, await store.nowMs()))];
  }

  /** Now, next, past: windows that hold now first, then those to come (soonest first), then the past. */
  async maintenanceViews(): Promise<MaintenanceWindowView[]> {
    const store = await this.store();
    const now = await store.nowMs();
    const order = { now: 0, next: 1, past: 2 } as const;
    return (await this.maintenanceWindows())
      .map((w) => windowView(w, now))
      .sort(
        (a, b) =>
          order[a.phase] - order[b.phase] ||
          (a.phase === "past"
            ? (b.endedAtMs ?? b.endsAtMs ?? 0) - (a.endedAtMs ?? a.endsAtMs ?? 0)
            : (a.current?.startsAtMs ?? 0) - (b.current?.startsAtMs ?? 0)),
      );
  }

  async createMaintenance(input: CreateMaintenanceInput, by: string): Promise<MaintenanceWindowView> {
    const store = await this.store();
    const now = await store.nowMs();
    const view = windowView(await createWindow(store.db, input, by, now), now);
    void this.engine.passNow().catch(() => undefined);
    return view;
  }

  async endMaintenance(id: number, by: string): Promise<MaintenanceWindowView | null> {
    const store = await this.store();
    const now = await store.nowMs();
    const ended = await endWindow(store.db, id, by, now);
    // open alerts it muted are told now
    if (ended) void this.engine.passNow().catch(() => undefined);
    return ended ? windowView(ended, now) : null;
  }

  async endSilence(id: number, by: string) {
    const store = await this.store();
    const ended = await endSilence(store.db, id, by, await store.nowMs());
    // open alerts it muted are told now
    if (ended) void this.engine.passNow().catch(() => undefined);
    return ended;
  }
}
