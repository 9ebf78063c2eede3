import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { RecentActionGuard, type RecentActionGuardOptions } from "./guard";
import { FakeClock } from "./testHelpers";

const unit = "vllm-team-a-llama.service";
const dbs = testDatabasesForFile("the action guard");

describe.each(dbs.dialects)("RecentActionGuard on %s", (dialect) => {
  let store: Store;
  beforeEach(async () => {
    store = await (await dbs.fresh(dialect)).open();
  });
  const newGuard = (options: RecentActionGuardOptions) => new RecentActionGuard(fixedStore(store), options);

  it("lets the first restart through and asks to confirm a second within 60 s, naming who and when", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock });
    expect((await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" })).ok).toBe(true);
    fake.advance(12_000);
    const second = await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob" });
    expect(second).toEqual({
      ok: false,
      previous: { host: "gpu1", unit, action: "restart", user: "alice", at: fake.now - 12_000 },
      message: `alice restarted ${unit} 12 s ago; confirm to do it again`,
    });
  });

  it("passes a confirmed second action and records it as the latest", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock });
    await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(5_000);
    expect((await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true })).ok).toBe(true);
    expect(await guard.peek("gpu1", unit)).toMatchObject({ user: "bob", at: fake.now });
  });

  it("forgets after the window", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock, windowMs: 30_000 });
    await guard.claim({ host: "gpu1", unit, action: "stop", user: "alice" });
    fake.advance(29_999);
    expect((await guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" })).ok).toBe(false);
    fake.advance(1);
    expect(await guard.peek("gpu1", unit)).toBeNull();
    expect((await guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" })).ok).toBe(true);
  });

  it("treats restart, stop and kill as one group; start and reset-failed are not guarded", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock });
    await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect(await guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^alice restarted/),
    });
    expect((await guard.claim({ host: "gpu1", unit, action: "kill", user: "bob" })).ok).toBe(false);
    expect((await guard.claim({ host: "gpu1", unit, action: "start", user: "bob" })).ok).toBe(true);
    expect((await guard.claim({ host: "gpu1", unit, action: "reset-failed", user: "bob" })).ok).toBe(true);
    expect(await guard.peek("gpu1", unit)).toMatchObject({ user: "alice", action: "restart" });
  });

  it("keeps units and hosts apart", async () => {
    const guard = newGuard({ clock: new FakeClock().clock });
    await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect((await guard.claim({ host: "gpu2", unit, action: "restart", user: "bob" })).ok).toBe(true);
    expect((await guard.claim({ host: "gpu1", unit: "other.service", action: "restart", user: "bob" })).ok).toBe(true);
    // keys cannot be confused by separators inside names
    const g2 = newGuard({ clock: new FakeClock().clock });
    await g2.claim({ host: "a", unit: "b:c.service", action: "restart", user: "x" });
    expect((await g2.claim({ host: "a:b", unit: "c.service", action: "restart", user: "y" })).ok).toBe(true);
  });

  it("the same person double-clicking also needs to confirm", async () => {
    const guard = newGuard({ clock: new FakeClock().clock });
    await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect((await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" })).ok).toBe(false);
  });

  it("release forgets a claim whose action was never sent, restoring an earlier one", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock });
    const first = await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    if (!first.ok) throw new Error("unexpected");
    await first.release();
    expect(await guard.peek("gpu1", unit)).toBeNull();

    await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(1000);
    const confirmed = await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true });
    if (!confirmed.ok) throw new Error("unexpected");
    await confirmed.release();
    expect(await guard.peek("gpu1", unit)).toMatchObject({ user: "alice" });
  });

  it("release does not drop a later claim by someone else", async () => {
    const fake = new FakeClock();
    const guard = newGuard({ clock: fake.clock });
    const a = await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(1000);
    await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true });
    if (a.ok) await a.release();
    expect(await guard.peek("gpu1", unit)).toMatchObject({ user: "bob" });
  });

  it("of many simultaneous unconfirmed restarts exactly one passes", async () => {
    const guard = newGuard({ clock: new FakeClock().clock });
    const results = await Promise.all(["a", "b", "c", "d"].map((user) => guard.claim({ host: "gpu1", unit, action: "restart", user })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });

  it("uses the database's clock when none is injected: one window for every replica", async () => {
    const guard = newGuard({ windowMs: 400 });
    expect((await guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" })).ok).toBe(true);
    const blocked = await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob" });
    expect(blocked).toMatchObject({ ok: false, message: expect.stringMatching(/^alice restarted .* 0 s ago/) });
    const before = await store.nowMs();
    expect(Math.abs((blocked as { previous: { at: number } }).previous.at - before)).toBeLessThan(5000);
    await new Promise((r) => setTimeout(r, 450));
    expect((await guard.claim({ host: "gpu1", unit, action: "restart", user: "bob" })).ok).toBe(true);
  });

  it.runIf(dialect === "postgres")("of 20 restarts at once through two replicas exactly one passes unconfirmed", async () => {
    const tdb = await dbs.fresh(dialect);
    const replicas = [new RecentActionGuard(fixedStore(await tdb.open())), new RecentActionGuard(fixedStore(await tdb.open()))];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2]!.claim({ host: "gpu1", unit, action: "restart", user: `u${i}` })));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });
});
