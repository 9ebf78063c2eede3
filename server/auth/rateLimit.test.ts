/** The sign-in limiter on both databases; time is the process's (rate-limiter-flexible's Date.now), faked here. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { addressBucket, LoginRateLimiter, type LoginRateLimits } from "./rateLimit";
import { MINUTE } from "./testHelpers";

const dbs = testDatabasesForFile("the sign-in limiter");

async function fail(limiter: LoginRateLimiter, user: string, ip: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const a = await limiter.attempt(user, ip);
    if (!a.allowed) throw new Error(`attempt ${i + 1} for ${user}@${ip} was refused`);
  }
}

const T0 = Date.UTC(2025, 0, 15, 12, 0, 0);
const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

describe.each(dbs.dialects)("LoginRateLimiter on %s", (dialect) => {
  let store: Store;
  const limiter = (limits?: Partial<LoginRateLimits>) => new LoginRateLimiter(fixedStore(store), { limits });

  beforeEach(async () => {
    store = await (await dbs.fresh(dialect)).open();
    vi.useFakeTimers({ toFake: ["Date"], now: T0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("allows 5 failures per user and address in 15 min, then refuses with a retry time", async () => {
    const l = limiter();
    await fail(l, "alice", "10.0.0.1", 5);
    expect(await l.attempt("alice", "10.0.0.1")).toEqual({ allowed: false, scope: "user+address", retryAfterMs: 15 * MINUTE });
    // other users from that address and that user from elsewhere are unaffected
    expect((await l.attempt("bob", "10.0.0.1")).allowed).toBe(true);
    expect((await l.attempt("alice", "10.0.0.2")).allowed).toBe(true);
    // user names are case-insensitive
    expect((await l.attempt("ALICE", "10.0.0.1")).allowed).toBe(false);
  });

  it("counts in a fixed window from the first failure: when it ends, all its slots are free", async () => {
    const l = limiter();
    await fail(l, "alice", "10.0.0.1", 1);
    advance(5 * MINUTE);
    await fail(l, "alice", "10.0.0.1", 4);
    expect(await l.attempt("alice", "10.0.0.1")).toMatchObject({ allowed: false, retryAfterMs: 10 * MINUTE });
    advance(10 * MINUTE - 1);
    expect((await l.attempt("alice", "10.0.0.1")).allowed).toBe(false);
    advance(1);
    await fail(l, "alice", "10.0.0.1", 5);
    expect((await l.attempt("alice", "10.0.0.1")).allowed).toBe(false);
  });

  it("refused attempts do not extend the block", async () => {
    const l = limiter();
    await fail(l, "alice", "10.0.0.1", 5);
    for (let i = 0; i < 50; i++) {
      advance(MINUTE / 10);
      expect((await l.attempt("alice", "10.0.0.1")).allowed).toBe(false);
    }
    advance(10 * MINUTE);
    expect((await l.attempt("alice", "10.0.0.1")).allowed).toBe(true);
  });

  it("limits one address to 20 failures across user names", async () => {
    const l = limiter();
    for (let i = 0; i < 20; i++) await fail(l, `user${i}`, "192.0.2.7", 1);
    expect(await l.attempt("user99", "192.0.2.7")).toMatchObject({ allowed: false, scope: "address" });
    expect((await l.attempt("user99", "192.0.2.8")).allowed).toBe(true);
  });

  it("limits one account across many addresses (per-user bucket), and not when it is off", async () => {
    const l = limiter({ perUser: { max: 10, windowMs: 15 * MINUTE } });
    for (let i = 0; i < 10; i++) await fail(l, "root", `198.51.100.${i}`, 1);
    expect(await l.attempt("root", "198.51.100.200")).toMatchObject({ allowed: false, scope: "user" });
    const off = limiter({ perUser: null });
    for (let i = 0; i < 60; i++) await fail(off, "admin", `198.51.100.${i}`, 1);
  });

  it("success clears the user+address failures and returns its own slot", async () => {
    const l = limiter();
    await fail(l, "alice", "10.0.0.1", 4);
    const ok = await l.attempt("alice", "10.0.0.1");
    expect(ok.allowed).toBe(true);
    if (ok.allowed) {
      await ok.succeeded();
      await ok.succeeded(); // idempotent
    }
    await fail(l, "alice", "10.0.0.1", 5);
    expect((await l.attempt("alice", "10.0.0.1")).allowed).toBe(false);
    // the address bucket got this success's slot back: 4 + 5 failures, 11 left of 20
    for (let i = 0; i < 11; i++) await fail(l, `u${i}`, "10.0.0.1", 1);
    expect(await l.attempt("zed", "10.0.0.1")).toMatchObject({ allowed: false, scope: "address" });
  });

  it("counts an attempt before the password is checked, so a parallel burst cannot slip through", async () => {
    const l = limiter();
    // 50 requests arrive together; none has finished hashing yet (no succeeded/failed known).
    const results = await Promise.all(Array.from({ length: 50 }, () => l.attempt("alice", "10.0.0.1")));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
  });

  it("buckets IPv6 by /64", async () => {
    const l = limiter();
    for (let i = 0; i < 20; i++) await fail(l, `u${i}`, `2001:db8:1:2::${i + 1}`, 1);
    expect((await l.attempt("other", "2001:db8:1:2:ffff::9")).allowed).toBe(false);
    expect((await l.attempt("other", "2001:db8:1:3::9")).allowed).toBe(true);
  });

  it("takes any name typed, however long or odd, as a bounded key", async () => {
    const l = limiter();
    await fail(l, "x".repeat(5000), "10.0.0.9", 1);
    await fail(l, "nul\u0000name 🚀", "10.0.0.9", 1);
    const keys = await store.db.selectFrom("login_limits").select("key").execute();
    expect(keys.every((k) => k.key.length < 200 && !k.key.includes("\u0000"))).toBe(true);
  });

  it("prunes rows whose window has ended", async () => {
    const l = limiter();
    await fail(l, "alice", "10.0.0.1", 1);
    expect(await l.pruneExpired()).toBe(0);
    advance(16 * MINUTE);
    expect(await l.pruneExpired()).toBe(2);
    expect(await store.db.selectFrom("login_limits").selectAll().execute()).toEqual([]);
  });

  it.runIf(dialect === "postgres")("two replicas count together: alternating failures trip the limit at the total", async () => {
    const tdb = await dbs.fresh(dialect);
    const [a, b] = [new LoginRateLimiter(fixedStore(await tdb.open())), new LoginRateLimiter(fixedStore(await tdb.open()))];
    const allowed: boolean[] = [];
    for (let i = 0; i < 8; i++) allowed.push((await (i % 2 ? b : a).attempt("alice", "10.0.0.1")).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false, false, false]);
  });
});

describe("addressBucket", () => {
  it("buckets IPv6 by /64 and unwraps IPv4-mapped addresses", () => {
    expect(addressBucket("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:0db8:0001:0002::ffff")).toBe("2001:db8:1:2::/64");
    expect(addressBucket("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(addressBucket("::1")).toBe("0:0:0:0::/64");
    expect(addressBucket("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressBucket("::ffff:10.1.2.3")).toBe("10.1.2.3");
    expect(addressBucket("10.1.2.3")).toBe("10.1.2.3");
    expect(addressBucket(null)).toBe("unknown");
  });
});
