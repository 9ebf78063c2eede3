import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoginRateLimiter } from "../auth/rateLimit";
import { tempDataDir } from "../auth/testHelpers";
import { openStore } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { ClientAddressResolver, forwardedHop } from "./clientAddress";
import { addUser, call, PASSWORD, PEER, startTestPanel, type TestPanel } from "./panelTestHarness";

describe("the client address behind trusted proxies", () => {
  const r = new ClientAddressResolver(["10.0.0.0/8", "fd00::/8"]);

  it("from an untrusted peer, X-Forwarded-For is ignored", async () => {
    expect(r.resolve("203.0.113.9", "1.2.3.4")).toBe("203.0.113.9");
    expect(new ClientAddressResolver([]).resolve("10.0.0.1", "1.2.3.4")).toBe("10.0.0.1");
  });

  it("from a trusted peer: the rightmost hop that is not a trusted proxy", async () => {
    expect(r.resolve("10.0.0.1", "198.51.100.7")).toBe("198.51.100.7");
    // the client wrote "6.6.6.6" itself; our proxies appended what they saw
    expect(r.resolve("10.0.0.1", "6.6.6.6, 198.51.100.7, 10.1.1.1")).toBe("198.51.100.7");
    expect(r.resolve("::ffff:10.0.0.1", "2001:db8::5")).toBe("2001:db8::5");
    expect(r.resolve("fd00::1", "[2001:db8::5]:4711, fd00::2")).toBe("2001:db8::5");
    expect(r.resolve("10.0.0.1", "198.51.100.7:5555")).toBe("198.51.100.7");
  });

  it("garbage, or only proxies: the last address a trusted proxy vouched for", async () => {
    expect(r.resolve("10.0.0.1", "not-an-ip")).toBe("10.0.0.1");
    expect(r.resolve("10.0.0.1", "198.51.100.7, evil, 10.2.2.2")).toBe("10.2.2.2");
    expect(r.resolve("10.0.0.1", "10.3.3.3, 10.2.2.2")).toBe("10.3.3.3");
    expect(r.resolve("10.0.0.1", null)).toBe("10.0.0.1");
    expect(r.resolve(null, "1.2.3.4")).toBeNull();
  });

  it("reads one X-Forwarded-For element", async () => {
    expect(forwardedHop(" 1.2.3.4 ")).toBe("1.2.3.4");
    expect(forwardedHop("[::1]:80")).toBe("::1");
    expect(forwardedHop("unknown")).toBeNull();
    expect(forwardedHop("1.2.3.4:80:90")).toBeNull();
  });
});

describe("the default sign-in limits", () => {
  it("are per (user, address) and per address: no per-account bucket anyone could fill from elsewhere", async () => {
    const tmp = tempDataDir();
    const store = await openStore({ dataDir: tmp.dir });
    try {
      const limiter = new LoginRateLimiter(fixedStore(store));
      for (let a = 0; a < 40; a++) for (let i = 0; i < 5; i++) expect((await limiter.attempt("ada", `192.0.2.${a}`)).allowed).toBe(true);
      expect(await limiter.attempt("ada", "192.0.2.1")).toMatchObject({ allowed: false, scope: "user+address" });
      expect((await limiter.attempt("ada", "198.51.100.50")).allowed).toBe(true);
    } finally {
      await store.close();
      tmp.cleanup();
    }
  });
});

describe("sign-in behind a reverse proxy (GPUDECK_TRUSTED_PROXIES = the proxy)", () => {
  let tp: TestPanel;
  const from = (client: string) => ({ "x-forwarded-for": client });
  beforeAll(async () => {
    tp = await startTestPanel({ url: "http://127.0.0.1:9", token: "unused-token-0123456789abcdefghijklmnopq" }, { env: { GPUDECK_TRUSTED_PROXIES: PEER } });
    await addUser(tp.panel, "ada", "admin");
    await addUser(tp.panel, "vera", "viewer");
  });
  afterAll(async () => tp?.close());

  it("one client's failures do not lock out everyone behind the proxy", async () => {
    for (let i = 0; i < 25; i++) {
      const r = await call(tp.panel, "session.login", { input: { username: `nobody${i}`, password: "wrong password 1" }, headers: from("198.51.100.1") });
      expect([401, 429]).toContain(r.status);
    }
    const blocked = await call(tp.panel, "session.login", { input: { username: "vera", password: PASSWORD }, headers: from("198.51.100.1") });
    expect(blocked.status).toBe(429);
    const other = await call(tp.panel, "session.login", { input: { username: "vera", password: PASSWORD }, headers: from("198.51.100.2") });
    expect(other.status, other.text).toBe(200);
  });

  it("the audit log names the client, not the proxy", async () => {
    await call(tp.panel, "session.login", { input: { username: "ada", password: "wrong password 1" }, headers: from("6.6.6.6, 198.51.100.3") });
    const row = (await tp.panel.auth.audit.queryAudit({ action: "login", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "ada", outcome: "refused", sourceAddr: "198.51.100.3" });
  });

  it("failures for a named admin from many places do not lock her out of her own", async () => {
    for (let a = 0; a < 25; a++) {
      for (let i = 0; i < 5; i++)
        await call(tp.panel, "session.login", { input: { username: "ada", password: "wrong password 1" }, headers: from(`192.0.2.${a}`) });
    }
    const own = await call(tp.panel, "session.login", { input: { username: "ada", password: PASSWORD }, headers: from("198.51.100.50") });
    expect(own.status, own.text).toBe(200);
  }, 60_000);
});
