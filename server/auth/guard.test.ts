import { describe, expect, it } from "vitest";
import { RecentActionGuard } from "./guard";
import { FakeClock } from "./testHelpers";

const unit = "vllm-team-a-llama.service";

describe("RecentActionGuard", () => {
  it("lets the first restart through and asks to confirm a second within 60 s, naming who and when", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock });
    expect(guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" }).ok).toBe(true);
    fake.advance(12_000);
    const second = guard.claim({ host: "gpu1", unit, action: "restart", user: "bob" });
    expect(second).toEqual({
      ok: false,
      previous: { host: "gpu1", unit, action: "restart", user: "alice", at: fake.now - 12_000 },
      message: `alice restarted ${unit} 12 s ago; confirm to do it again`,
    });
  });

  it("passes a confirmed second action and records it as the latest", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock });
    guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(5_000);
    expect(guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true }).ok).toBe(true);
    expect(guard.peek("gpu1", unit)).toMatchObject({ user: "bob", at: fake.now });
  });

  it("forgets after the window", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock, windowMs: 30_000 });
    guard.claim({ host: "gpu1", unit, action: "stop", user: "alice" });
    fake.advance(29_999);
    expect(guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" }).ok).toBe(false);
    fake.advance(1);
    expect(guard.peek("gpu1", unit)).toBeNull();
    expect(guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" }).ok).toBe(true);
  });

  it("treats restart, stop and kill as one group; start and reset-failed are not guarded", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock });
    guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect(guard.claim({ host: "gpu1", unit, action: "stop", user: "bob" })).toMatchObject({ ok: false, message: expect.stringMatching(/^alice restarted/) });
    expect(guard.claim({ host: "gpu1", unit, action: "kill", user: "bob" }).ok).toBe(false);
    expect(guard.claim({ host: "gpu1", unit, action: "start", user: "bob" }).ok).toBe(true);
    expect(guard.claim({ host: "gpu1", unit, action: "reset-failed", user: "bob" }).ok).toBe(true);
    expect(guard.peek("gpu1", unit)).toMatchObject({ user: "alice", action: "restart" });
  });

  it("keeps units and hosts apart", () => {
    const guard = new RecentActionGuard({ clock: new FakeClock().clock });
    guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect(guard.claim({ host: "gpu2", unit, action: "restart", user: "bob" }).ok).toBe(true);
    expect(guard.claim({ host: "gpu1", unit: "other.service", action: "restart", user: "bob" }).ok).toBe(true);
    // keys cannot be confused by separators inside names
    const g2 = new RecentActionGuard({ clock: new FakeClock().clock });
    g2.claim({ host: "a", unit: "b:c.service", action: "restart", user: "x" });
    expect(g2.claim({ host: "a:b", unit: "c.service", action: "restart", user: "y" }).ok).toBe(true);
  });

  it("the same person double-clicking also needs to confirm", () => {
    const guard = new RecentActionGuard({ clock: new FakeClock().clock });
    guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    expect(guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" }).ok).toBe(false);
  });

  it("release forgets a claim whose action was never sent, restoring an earlier one", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock });
    const first = guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    if (!first.ok) throw new Error("unexpected");
    first.release();
    expect(guard.peek("gpu1", unit)).toBeNull();

    guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(1000);
    const confirmed = guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true });
    if (!confirmed.ok) throw new Error("unexpected");
    confirmed.release();
    expect(guard.peek("gpu1", unit)).toMatchObject({ user: "alice" });
  });

  it("release does not drop a later claim by someone else", () => {
    const fake = new FakeClock();
    const guard = new RecentActionGuard({ clock: fake.clock });
    const a = guard.claim({ host: "gpu1", unit, action: "restart", user: "alice" });
    fake.advance(1000);
    guard.claim({ host: "gpu1", unit, action: "restart", user: "bob", confirmed: true });
    if (a.ok) a.release();
    expect(guard.peek("gpu1", unit)).toMatchObject({ user: "bob" });
  });

  it("of many simultaneous unconfirmed restarts exactly one passes", () => {
    const guard = new RecentActionGuard({ clock: new FakeClock().clock });
    const results = ["a", "b", "c", "d"].map((user) => guard.claim({ host: "gpu1", unit, action: "restart", user }));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
  });
});
