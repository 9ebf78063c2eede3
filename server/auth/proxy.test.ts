import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { normaliseAddress, ProxyAuthenticator, PROXY_AUTH_DISABLED, proxyTrustWarning, trustedProxyList, type ProxyAuthConfig } from "./proxy";
import { UserStore } from "./users";
import { tempDataDir } from "./testHelpers";

describe("ProxyAuthenticator", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  let store: Store;
  let users: UserStore;
  const config: ProxyAuthConfig = {
    enabled: true,
    header: "X-Forwarded-User",
    trustedProxies: ["127.0.0.1", "::1", "10.20.0.0/16"],
    defaultRole: null,
  };

  beforeEach(async () => {
    tmp = tempDataDir();
    // the proxy's logic, over the users it looks up (the stores' own tests run on both databases)
    store = await openStore({ dataDir: tmp.dir });
    users = new UserStore(fixedStore(store));
    await users.createUser({ username: "alice@example.com", password: null, role: "operator", unitPatterns: ["vllm-*"] });
    await users.createUser({ username: "root", password: "correct horse battery staple", role: "admin" });
    await users.createUser({ username: "root2", password: "correct horse battery staple", role: "admin" });
    await users.createUser({ username: "gone", password: null, role: "viewer" });
    await users.setDisabled("gone", true);
  });
  afterEach(async () => {
    await store.close();
    tmp.cleanup();
  });

  it("is off by default: the header is ignored entirely", async () => {
    const off = new ProxyAuthenticator(PROXY_AUTH_DISABLED, users);
    expect(await off.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "root" } })).toEqual({ kind: "none" });
  });

  it("believes the header from a trusted proxy and maps it to the local user", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    const r = await proxy.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "alice@example.com" } });
    expect(r).toEqual({
      kind: "user",
      principal: {
        userId: (await users.getUser("alice@example.com"))!.id,
        username: "alice@example.com",
        role: "operator",
        unitPatterns: ["vllm-*"],
        via: "proxy",
      },
    });
  });

  it.each(["192.0.2.1", "10.21.0.1", "::2", "127.0.0.2", "", null, "not-an-ip", "::ffff:192.0.2.1"])(
    "ignores the header from the untrusted address %j",
    async (addr) => {
      const proxy = new ProxyAuthenticator(config, users);
      const r = await proxy.identify({ remoteAddress: addr, headers: { "x-forwarded-user": "root" } });
      expect(r.kind).toBe("ignored");
    },
  );

  it("accepts CIDR ranges, IPv6 and IPv4-mapped peers", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    for (const addr of ["10.20.255.1", "::ffff:10.20.0.9", "::1", "::ffff:127.0.0.1"]) {
      expect(await proxy.isTrustedProxy(addr)).toBe(true);
    }
    expect(await proxy.identify({ remoteAddress: "10.20.3.4", headers: { "x-forwarded-user": "root" } })).toMatchObject({
      kind: "user",
      principal: { role: "admin" },
    });
  });

  it("reads fetch Headers as well as Node header records", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    const headers = new Headers({ "X-Forwarded-User": "root" });
    expect(await proxy.identify({ remoteAddress: "127.0.0.1", headers })).toMatchObject({ kind: "user", principal: { username: "root" } });
  });

  it("falls back (none) when a trusted proxy sends no identity", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    expect(await proxy.identify({ remoteAddress: "127.0.0.1", headers: {} })).toEqual({ kind: "none" });
    expect(await proxy.identify({ remoteAddress: "192.0.2.1", headers: {} })).toEqual({ kind: "none" });
  });

  it("refuses repeated, comma-joined or malformed identities", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    const from = (headers: Record<string, string | string[]> | Headers) => proxy.identify({ remoteAddress: "127.0.0.1", headers });
    expect(await from({ "x-forwarded-user": ["root", "alice@example.com"] })).toMatchObject({ kind: "refused" });
    const joined = new Headers();
    joined.append("x-forwarded-user", "alice@example.com");
    joined.append("x-forwarded-user", "root");
    expect(await from(joined)).toMatchObject({ kind: "refused" });
    for (const bad of ["", "-x", "root; admin", "$(id)", "a b", "x".repeat(200)]) {
      expect((await from({ "x-forwarded-user": bad })).kind).not.toBe("user");
    }
  });

  it("refuses unknown users without a default role, and disabled users always", async () => {
    const proxy = new ProxyAuthenticator(config, users);
    expect(await proxy.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "stranger" } })).toMatchObject({
      kind: "refused",
      username: "stranger",
    });
    expect(await proxy.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "gone" } })).toMatchObject({
      kind: "refused",
      reason: "this account is disabled",
    });
    const withDefault = new ProxyAuthenticator({ ...config, defaultRole: "viewer" }, users);
    expect(await withDefault.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "gone" } })).toMatchObject({ kind: "refused" });
  });

  it("maps unknown users to the configured default role", async () => {
    const proxy = new ProxyAuthenticator({ ...config, defaultRole: "operator", defaultUnitPatterns: ["tgi-*"] }, users);
    expect(await proxy.identify({ remoteAddress: "::1", headers: { "x-forwarded-user": "stranger" } })).toEqual({
      kind: "user",
      principal: { userId: null, username: "stranger", role: "operator", unitPatterns: ["tgi-*"], via: "proxy" },
    });
  });

  it("matches names exactly: another case of an account's name is refused, not mapped to it", async () => {
    const proxy = new ProxyAuthenticator({ ...config, defaultRole: "viewer" }, users);
    for (const name of ["ROOT", "Root", "Alice@Example.com"]) {
      expect(await proxy.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": name } })).toMatchObject({
        kind: "refused",
        reason: expect.stringMatching(/names must match exactly/),
      });
    }
  });

  describe("with a shared secret from the proxy", () => {
    const SECRET = "proxy-secret-0123456789abcdefghijklmnop";
    const withSecret = { ...config, secret: SECRET };

    it("believes the identity only with the secret: a local process without it is refused", async () => {
      const proxy = new ProxyAuthenticator(withSecret, users);
      const ask = (headers: Record<string, string>) => proxy.identify({ remoteAddress: "127.0.0.1", headers: { "x-forwarded-user": "root", ...headers } });
      expect(await ask({ "x-gpudeck-proxy-secret": SECRET })).toMatchObject({ kind: "user", principal: { username: "root" } });
      expect(await ask({})).toMatchObject({ kind: "refused", reason: expect.stringMatching(/without the proxy's secret/) });
      expect(await ask({ "x-gpudeck-proxy-secret": `${SECRET}x` })).toMatchObject({ kind: "refused" });
      expect(await ask({ "x-gpudeck-proxy-secret": "" })).toMatchObject({ kind: "refused" });
      // and the secret alone never comes from an untrusted address
      expect((await proxy.identify({ remoteAddress: "192.0.2.1", headers: { "x-forwarded-user": "root", "x-gpudeck-proxy-secret": SECRET } })).kind).toBe(
        "ignored",
      );
    });

    it("takes a header name of its own, and refuses a short secret", async () => {
      const proxy = new ProxyAuthenticator({ ...withSecret, secretHeader: "X-Proxy-Key" }, users);
      expect((await proxy.identify({ remoteAddress: "::1", headers: { "x-forwarded-user": "root", "x-proxy-key": SECRET } })).kind).toBe("user");
      expect(() => new ProxyAuthenticator({ ...config, secret: "short" }, users)).toThrow(/at least 32/);
    });
  });

  it("warns loudly when loopback is trusted without a secret", async () => {
    expect(proxyTrustWarning(config)).toMatch(/ANY process on this machine .* can sign in as ANY user/);
    expect(proxyTrustWarning({ ...config, trustedProxies: ["::1"] })).toMatch(/trusts loopback/);
    expect(proxyTrustWarning({ ...config, secret: "proxy-secret-0123456789abcdefghijklmnop" })).toBeNull();
    expect(proxyTrustWarning({ ...config, trustedProxies: ["10.20.0.0/16"] })).toBeNull();
    expect(proxyTrustWarning(PROXY_AUTH_DISABLED)).toBeNull();
  });

  it("rejects unusable configuration", async () => {
    expect(() => new ProxyAuthenticator({ ...config, trustedProxies: [] }, users)).toThrow(/at least one/);
    expect(() => new ProxyAuthenticator({ ...config, trustedProxies: ["example.com"] }, users)).toThrow(/not an IP/);
    expect(() => new ProxyAuthenticator({ ...config, trustedProxies: ["10.0.0.0/33"] }, users)).toThrow(/prefix/);
    expect(() => new ProxyAuthenticator({ ...config, header: "x-user\r\nx" }, users)).toThrow(/header/);
    expect(() => new ProxyAuthenticator({ ...config, defaultRole: "root" as never }, users)).toThrow(/role/);
  });
});

describe("address helpers", () => {
  it("normalises peer addresses", async () => {
    expect(normaliseAddress("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(normaliseAddress("fe80::1%eth0")).toBe("fe80::1");
    expect(normaliseAddress("10.0.0.1, 10.0.0.2")).toBeNull();
    expect(normaliseAddress(undefined)).toBeNull();
  });
  it("builds a matcher from addresses and ranges", async () => {
    const list = trustedProxyList(["192.168.1.0/24", "fd00::/8"]);
    expect(list.check("192.168.1.77", "ipv4")).toBe(true);
    expect(list.check("192.168.2.1", "ipv4")).toBe(false);
    expect(list.check("fd12::1", "ipv6")).toBe(true);
  });
});
