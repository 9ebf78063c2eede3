/**
 * Panel events on both databases: written in the writer's transaction (a rollback leaves none),
 * read once and in order by every replica's bus; on PostgreSQL a NOTIFY reaches another replica
 * at once (polling is off here, so only the notification can deliver it), and a LISTEN connection
 * that is cut reconnects and catches up by id, missing nothing.
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { Store } from "./database";
import { PanelEventBus } from "./eventBus";
import { publishEvent, type PanelEvent } from "./events";
import { fixedStore } from "./lazyStore";
import { testDatabasesForFile } from "./testing/databases";

const dbs = testDatabasesForFile("panel events");
const buses: PanelEventBus[] = [];
afterEach(async () => {
  await Promise.all(buses.splice(0).map((b) => b.stop()));
});

/** A bus that only reads when poked or notified (its poll is an hour), and what it delivered. */
function busOn(store: Store, pollMs = 3_600_000) {
  const bus = new PanelEventBus(fixedStore(store), { pollMs, listenPingMs: 200 });
  buses.push(bus);
  const seen: PanelEvent[] = [];
  bus.subscribe((e) => seen.push(e));
  return { bus, seen };
}

const hostEvent = (store: Store, name: string) =>
  store.write(async (tx) => {
    await publishEvent(tx, store.dialect, "hosts", { name }, Date.now());
  });

async function until(what: string, probe: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(dbs.dialects)("the panel event bus on %s", (dialect) => {
  it("delivers what is written from now on, once each and in order; a rolled-back write delivers nothing", async () => {
    const store = await (await dbs.fresh(dialect)).open();
    await hostEvent(store, "before-start");
    const { bus, seen } = busOn(store);
    bus.start();
    await bus.settled();
    await hostEvent(store, "a");
    await expect(
      store.write(async (tx) => {
        await publishEvent(tx, store.dialect, "hosts", { name: "rolled-back" }, Date.now());
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    await hostEvent(store, "b");
    bus.poke();
    bus.poke();
    await bus.settled();
    expect(seen.map((e) => e.kind === "hosts" && e.body.name)).toEqual(["a", "b"]);
    expect(seen[0]!.id).toBeLessThan(seen[1]!.id);
  });

  it("skips kinds it does not know (a newer replica's) without stopping", async () => {
    const store = await (await dbs.fresh(dialect)).open();
    const { bus, seen } = busOn(store);
    bus.start();
    await bus.settled();
    await store.db.insertInto("panel_events").values({ at: 1, kind: "from-the-future", body: "{}" }).execute();
    await store.db.insertInto("panel_events").values({ at: 1, kind: "hosts", body: "not json" }).execute();
    await hostEvent(store, "c");
    await bus.settled();
    expect(seen.map((e) => e.kind)).toEqual(["hosts"]);
  });
});

describe.runIf(dbs.dialects.includes("postgres"))("the panel event bus across replicas on PostgreSQL", () => {
  it("a NOTIFY from one replica's transaction reaches the other's bus without polling", async () => {
    const db = await dbs.fresh("postgres");
    const [a, b] = [await db.open(), await db.open()];
    const { bus } = busOn(b);
    const seen: string[] = [];
    bus.subscribe((e) => e.kind === "hosts" && seen.push(e.body.name));
    bus.start();
    await until("listening", () => bus.listenStatus().ok);
    await bus.settled();
    const t0 = Date.now();
    await hostEvent(a, "from-a");
    await until("the event on the other replica", () => seen.includes("from-a"), 2000);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("a LISTEN connection that is cut reconnects and delivers what was written meanwhile, in order", async () => {
    const db = await dbs.fresh("postgres");
    const [a, b] = [await db.open(), await db.open()];
    const { bus, seen } = busOn(b);
    bus.start();
    await until("listening", () => bus.listenStatus().ok);
    await bus.settled();
    const since = bus.listenStatus().since;
    // cut the listener's connection from the server side (as a failover or a network drop does)
    const admin = new pg.Client({ connectionString: db.databaseUrl! });
    await admin.connect();
    await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where query ilike 'listen%' and pid <> pg_backend_pid()");
    await until("the loss noticed", () => !bus.listenStatus().ok);
    expect(bus.listenStatus().error).toBeTruthy();
    // written while the listener is away: no notification reaches it
    for (const name of ["m1", "m2", "m3"]) await hostEvent(a, name);
    await until("listening again", () => bus.listenStatus().ok, 8000);
    await until("caught up", () => seen.length === 3);
    expect(seen.map((e) => e.kind === "hosts" && e.body.name)).toEqual(["m1", "m2", "m3"]);
    expect(bus.listenStatus().since).toBeGreaterThan(since);
    await admin.end();
  });

  it("ids become visible in order even when transactions commit out of order (no event is skipped)", async () => {
    const db = await dbs.fresh("postgres");
    const [a, b] = [await db.open(), await db.open()];
    const { bus, seen } = busOn(b, 50);
    bus.start();
    await bus.settled();
    // a slow transaction that publishes first, and a fast one behind it
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow = a.write(async (tx) => {
      await publishEvent(tx, a.dialect, "hosts", { name: "slow" }, Date.now());
      await held;
    });
    await new Promise((r) => setTimeout(r, 100));
    const fast = b.write(async (tx) => publishEvent(tx, b.dialect, "hosts", { name: "fast" }, Date.now()));
    await new Promise((r) => setTimeout(r, 200));
    release();
    await Promise.all([slow, fast]);
    await until("both", () => seen.length === 2);
    expect(seen.map((e) => e.kind === "hosts" && e.body.name)).toEqual(["slow", "fast"]);
  });
});
