import { describe, expect, it } from "vitest";
import { addressBucket, LoginRateLimiter } from "./rateLimit";
import { FakeClock, MINUTE } from "./testHelpers";

function fail(limiter: LoginRateLimiter, user: string, ip: string, times: number): void {
  for (let i = 0; i < times; i++) {
    const a = limiter.attempt(user, ip);
    if (!a.allowed) throw new Error(`attempt ${i + 1} for ${user}@${ip} was refused`);
  }
}

describe("LoginRateLimiter", () => {
  it("allows 5 failures per user and address in 15 min, then refuses with a retry time", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock });
    fail(limiter, "alice", "10.0.0.1", 5);
    const refused = limiter.attempt("alice", "10.0.0.1");
    expect(refused).toEqual({ allowed: false, scope: "user+address", retryAfterMs: 15 * MINUTE });
    // other users from that address and that user from elsewhere are unaffected
    expect(limiter.attempt("bob", "10.0.0.1").allowed).toBe(true);
    expect(limiter.attempt("alice", "10.0.0.2").allowed).toBe(true);
    // user names are case-insensitive
    expect(limiter.attempt("ALICE", "10.0.0.1").allowed).toBe(false);
  });

  it("is a sliding window: the oldest failure expiring frees one slot", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock });
    fail(limiter, "alice", "10.0.0.1", 1);
    fake.advance(5 * MINUTE);
    fail(limiter, "alice", "10.0.0.1", 4);
    const r = limiter.attempt("alice", "10.0.0.1");
    expect(r).toMatchObject({ allowed: false, retryAfterMs: 10 * MINUTE });
    fake.advance(10 * MINUTE - 1);
    expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(false);
    fake.advance(1);
    expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(true);
    expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(false);
  });

  it("refused attempts do not extend the block", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock });
    fail(limiter, "alice", "10.0.0.1", 5);
    for (let i = 0; i < 50; i++) {
      fake.advance(MINUTE / 10);
      expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(false);
    }
    fake.advance(10 * MINUTE);
    expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(true);
  });

  it("limits one address to 20 failures across user names", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock });
    for (let i = 0; i < 20; i++) fail(limiter, `user${i}`, "192.0.2.7", 1);
    expect(limiter.attempt("user99", "192.0.2.7")).toMatchObject({ allowed: false, scope: "address" });
    expect(limiter.attempt("user99", "192.0.2.8").allowed).toBe(true);
  });

  it("limits one account across many addresses (per-user bucket)", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock, limits: { perUser: { max: 10, windowMs: 15 * MINUTE } } });
    for (let i = 0; i < 10; i++) fail(limiter, "root", `198.51.100.${i}`, 1);
    expect(limiter.attempt("root", "198.51.100.200")).toMatchObject({ allowed: false, scope: "user" });
    const off = new LoginRateLimiter({ clock: fake.clock, limits: { perUser: null } });
    for (let i = 0; i < 200; i++) fail(off, "root", `198.51.100.${i}`, 1);
  });

  it("success clears the user+address failures and returns its own slot", () => {
    const fake = new FakeClock();
    const limiter = new LoginRateLimiter({ clock: fake.clock });
    fail(limiter, "alice", "10.0.0.1", 4);
    const ok = limiter.attempt("alice", "10.0.0.1");
    expect(ok.allowed).toBe(true);
    if (ok.allowed) {
      ok.succeeded();
      ok.succeeded(); // idempotent
    }
    fail(limiter, "alice", "10.0.0.1", 5);
    expect(limiter.attempt("alice", "10.0.0.1").allowed).toBe(false);
  });

  it("counts an attempt before the password is checked, so a parallel burst cannot slip through", () => {
    const limiter = new LoginRateLimiter({ clock: new FakeClock().clock });
    // 50 requests arrive together; none has finished hashing yet (no succeeded/failed known).
    const results = Array.from({ length: 50 }, () => limiter.attempt("alice", "10.0.0.1"));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
  });

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

    const limiter = new LoginRateLimiter({ clock: new FakeClock().clock });
    for (let i = 0; i < 20; i++) fail(limiter, `u${i}`, `2001:db8:1:2::${i + 1}`, 1);
    expect(limiter.attempt("other", "2001:db8:1:2:ffff::9").allowed).toBe(false);
    expect(limiter.attempt("other", "2001:db8:1:3::9").allowed).toBe(true);
  });

  it("keeps memory bounded under a flood of distinct keys", () => {
    const limiter = new LoginRateLimiter({ clock: new FakeClock().clock, maxKeys: 100 });
    for (let i = 0; i < 5000; i++) limiter.attempt(`u${i}`, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(limiter.trackedKeys()).toBeLessThanOrEqual(300);
  });
});
