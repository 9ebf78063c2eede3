/**
 * Single sign-on against a real OpenID provider (oidc-provider on loopback, ./../auth/oidc/testing):
 * sign-in through its login page, the account made and kept in line with the groups, and each
 * refusal (no matching group, bad state, replayed response, a code the provider refuses, wrong
 * audience, expired token, a disabled account, a local account of the same name), each audited and
 * landing on /login?error=… . On SQLite and, where installed, PostgreSQL.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { OIDC_CALLBACK_PATH, OIDC_LOGIN_PATH } from "../contract/oidc";
import { testDatabasesForFile } from "../store/testing/databases";
import { signInAtProvider, startTestProvider, type TestProvider } from "../auth/oidc/testing/provider";
import { call, openEventStream, PEER, startTestPanel, type TestPanel } from "./panelTestHarness";
import type { CreatePanelOptions } from "./instance";

const dbs = testDatabasesForFile("single sign-on");
const PUBLIC_URL = "http://127.0.0.1:3000";
const ROLES = JSON.stringify([
  { group: "ml-platform", role: "admin" },
  { group: "ml-oncall", role: "operator", units: ["gpu-a:vllm-*", "gpu-b:*"] },
  { group: "ml-readers", role: "viewer" },
]);

let idp: TestProvider;
beforeAll(async () => {
  idp = await startTestProvider({
    redirectUris: [`${PUBLIC_URL}${OIDC_CALLBACK_PATH}`],
    postLogoutRedirectUris: [`${PUBLIC_URL}/login`],
    people: [
      { sub: "sub-ada", preferred_username: "ada", groups: ["staff", "ml-platform"] },
      { sub: "sub-otto", preferred_username: "otto", groups: ["ml-oncall", "ml-readers"] },
      { sub: "sub-eve", preferred_username: "eve", groups: ["marketing"] },
      { sub: "sub-root", preferred_username: "root", groups: ["ml-platform"] },
    ],
  });
}, 30_000);
afterAll(() => idp.close());

const headers = (cookie?: string) => ({ host: "127.0.0.1:3000", "x-gpudeck-peer": PEER, "user-agent": "vitest", ...(cookie ? { cookie } : {}) });

/** Set-Cookie name=value pairs, as a browser would send them back. */
const pairs = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .filter((c) => !c.endsWith("="));

describe.each(dbs.dialects)("single sign-on on %s", (dialect) => {
  let tp: TestPanel;
  const open = async (panelOptions: CreatePanelOptions = {}, env: Record<string, string> = {}) => {
    const db = await dbs.fresh(dialect);
    tp = await startTestPanel(
      { url: "http://127.0.0.1:9", token: "test-agent-token-0123456789abcdefghijklmnop" },
      {
        env: {
          GPUDECK_PUBLIC_URL: PUBLIC_URL,
          GPUDECK_OIDC_ISSUER: idp.issuer,
          GPUDECK_OIDC_CLIENT_ID: idp.clientId,
          GPUDECK_OIDC_CLIENT_SECRET: idp.clientSecret,
          GPUDECK_OIDC_ROLES: ROLES,
          ...(db.databaseUrl ? { GPUDECK_DATABASE_URL: db.databaseUrl } : {}),
          ...env,
        },
        panel: { background: false, ...panelOptions },
      },
    );
    return tp.panel;
  };
  afterEach(() => tp?.close());

  /** /api/auth/oidc/login: the provider's URL and the flow cookie. */
  async function start(next = "/units") {
    const res = await tp.panel.handleOidc(new Request(`${PUBLIC_URL}${OIDC_LOGIN_PATH}?next=${encodeURIComponent(next)}`, { headers: headers() }));
    expect(res.status).toBe(303);
    return { location: res.headers.get("location")!, flowCookie: pairs(res).join("; ") };
  }
  const callback = (url: URL, cookie: string) =>
    tp.panel.handleOidc(new Request(`${PUBLIC_URL}${OIDC_CALLBACK_PATH}${url.search}`, { headers: headers(cookie) }));
  /** the whole way: start, the provider's login page as `login`, the callback */
  async function signIn(login: string, next = "/units") {
    const { location, flowCookie } = await start(next);
    const back = await signInAtProvider(location, login, `${PUBLIC_URL}${OIDC_CALLBACK_PATH}`);
    return { res: await callback(back, flowCookie), back, flowCookie };
  }
  const me = async (cookie: string) =>
    (await call(tp.panel, "session.me", { method: "GET", cookie })).json?.result?.data as {
      user: { name: string; role: string; unitPatterns: string[] } | null;
    };
  const refusedWith = (res: Response, code: string) => {
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/login?error=${code}`);
  };
  const lastLogin = async () => (await tp.panel.auth.audit.queryAudit({ action: "login", limit: 1 }))[0]!;

  it("signs in through the provider's login page: the account is made from the provider, role from the first matching group", async () => {
    await open();
    const { location, flowCookie } = await start("/hosts/gpu-a");
    const auth = new URL(location);
    expect(auth.origin).toBe(idp.issuer);
    expect(auth.searchParams.get("code_challenge_method")).toBe("S256");
    expect(auth.searchParams.get("redirect_uri")).toBe(`${PUBLIC_URL}${OIDC_CALLBACK_PATH}`);
    expect(flowCookie).toMatch(/^gpudeck_oidc=/);
    const back = await signInAtProvider(location, "ada", `${PUBLIC_URL}${OIDC_CALLBACK_PATH}`);
    const res = await callback(back, flowCookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('content="0;url=/hosts/gpu-a"');
    const session = pairs(res).find((c) => c.startsWith("gpudeck_session="))!;
    expect(res.headers.getSetCookie().find((c) => c.startsWith("gpudeck_session="))).toMatch(/HttpOnly; SameSite=Strict/);
    expect(await me(session)).toMatchObject({ user: { name: "ada", role: "admin", unitPatterns: [] } });
    const user = (await tp.panel.auth.users.getUser("ada"))!;
    expect(user).toMatchObject({ source: "oidc", hasPassword: false, role: "admin" });
    expect(await lastLogin()).toMatchObject({ user: "ada", outcome: "ok", reason: "oidc (Company SSO)", detail: "group ml-platform" });
    expect((await tp.panel.auth.audit.queryAudit({ action: "user.add", limit: 1 }))[0]).toMatchObject({ user: "ada", outcome: "ok" });
    // no password sign-in for it
    expect((await call(tp.panel, "session.login", { input: { username: "ada", password: "anything at all here" } })).status).toBe(401);
    // the provider's ID token stays on the server, sealed, with the session
    const { db } = await tp.panel.services.store.get();
    const kept = (await db.selectFrom("sessions").select("oidc_id_token").where("user_id", "=", user.id).executeTakeFirstOrThrow()).oidc_id_token;
    expect(kept).toMatch(/^gdsec1\./);
    // sign-out ends the panel's session and points at the provider's end_session_endpoint, with the ID token as the hint
    const out = await call(tp.panel, "session.logout", { cookie: session });
    const endSessionUrl = new URL((out.json?.result?.data as { endSessionUrl: string }).endSessionUrl);
    expect(endSessionUrl.origin).toBe(idp.issuer);
    expect(endSessionUrl.searchParams.get("post_logout_redirect_uri")).toBe(`${PUBLIC_URL}/login`);
    const hint = endSessionUrl.searchParams.get("id_token_hint")!;
    expect(hint).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(JSON.parse(Buffer.from(hint.split(".")[1]!, "base64url").toString())).toMatchObject({ aud: expect.anything(), iss: idp.issuer });
    expect((await me(session)).user).toBeNull();
  });

  it("sets role and units from the groups at every sign-in, and audits the change", async () => {
    await open({ background: true }); // the panel's event bus runs: a change reaches open streams through it
    expect((await signIn("otto")).res.status).toBe(200);
    expect(await tp.panel.auth.users.getUser("otto")).toMatchObject({ role: "operator", unitPatterns: ["gpu-a:vllm-*", "gpu-b:*"] });
    // an open stream of that first session re-checks at once when the groups change the role (issue 25, finding 6)
    const first = pairs((await signIn("otto")).res).find((c) => c.startsWith("gpudeck_session="))!;
    const stream = await openEventStream(tp.panel, first, { watch: "fleet" });
    await stream.until(/"kind":"fleet-snapshot"/);
    idp.people.get("otto")!.groups = ["ml-readers"];
    const again = await signIn("otto");
    expect(again.res.status).toBe(200);
    expect(await tp.panel.auth.users.getUser("otto")).toMatchObject({ role: "viewer", unitPatterns: [] });
    const change = (await tp.panel.auth.audit.queryAudit({ action: "user.update", limit: 1 }))[0]!;
    expect(change).toMatchObject({ user: "otto", reason: "oidc: groups", outcome: "ok" });
    expect(change.detail).toContain("role operator → viewer");
    await stream.until(/event: return/, 2000);
    // out of every group: not let in any more
    idp.people.get("otto")!.groups = [];
    refusedWith((await signIn("otto")).res, "no-group");
    idp.people.get("otto")!.groups = ["ml-oncall", "ml-readers"];
  });

  it("holds at most GPUDECK_SESSIONS_PER_USER sessions: one more sign-in ends the oldest, audited as session.limit", async () => {
    await open({}, { GPUDECK_SESSIONS_PER_USER: "2" });
    for (let i = 0; i < 3; i++) {
      expect((await signIn("ada")).res.status).toBe(200);
      tp.clock.offsetMs += 1000; // distinct creation times: "oldest" is well defined
    }
    const user = (await tp.panel.auth.users.getUser("ada"))!;
    expect(await tp.panel.auth.sessions.listSessions(user.id)).toHaveLength(2);
    const rows = await tp.panel.auth.audit.queryAudit({ action: "session.limit", limit: 10 });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user: "ada", outcome: "ok" });
    expect(rows[0]!.detail).toMatch(/2 sessions open \(GPUDECK_SESSIONS_PER_USER\): the oldest session was ended/);
  });

  it("refuses someone in no matching group", async () => {
    await open();
    const { res } = await signIn("eve");
    refusedWith(res, "no-group");
    expect(pairs(res).some((c) => c.startsWith("gpudeck_session="))).toBe(false);
    expect(await lastLogin()).toMatchObject({ user: "eve", outcome: "refused", reason: "oidc: no-group", detail: "groups: marketing" });
    expect(await tp.panel.auth.users.getUser("eve")).toBeNull();
  });

  it("refuses a response with a bad state, or with no flow cookie", async () => {
    await open();
    const { location, flowCookie } = await start();
    const back = await signInAtProvider(location, "ada", `${PUBLIC_URL}${OIDC_CALLBACK_PATH}`);
    const forged = new URL(back);
    forged.searchParams.set("state", "not-the-state-we-sent-0123456789");
    refusedWith(await callback(forged, flowCookie), "bad-state");
    expect(await lastLogin()).toMatchObject({ outcome: "refused", reason: "oidc: bad-state" });
    refusedWith(await callback(back, ""), "bad-state");
  });

  it("refuses a replayed response, and a code the provider refuses", async () => {
    await open();
    const { res, back, flowCookie } = await signIn("ada");
    expect(res.status).toBe(200);
    refusedWith(await callback(back, flowCookie), "replayed");
    expect(await lastLogin()).toMatchObject({ outcome: "refused", reason: "oidc: replayed" });
    // the used code under another flow's state and cookie: its PKCE verifier does not fit, the provider refuses it
    const other = await start();
    const swapped = new URL(back);
    swapped.searchParams.set("state", new URL(other.location).searchParams.get("state")!);
    refusedWith(await callback(swapped, other.flowCookie), "code-refused");
    expect((await lastLogin()).detail).toMatch(/invalid_grant/);
  });

  it("refuses an ID token issued for another audience (signed by the provider's key)", async () => {
    const wrongAudience: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).endsWith("/token")) return res;
      const body = (await res.json()) as { id_token: string };
      body.id_token = await idp.resign(body.id_token, { aud: "some-other-app" });
      return Response.json(body, { status: res.status, headers: { "cache-control": "no-store" } });
    };
    await open({ oidc: { fetch: wrongAudience } });
    refusedWith((await signIn("ada")).res, "wrong-audience");
    expect(await lastLogin()).toMatchObject({ outcome: "refused", reason: "oidc: wrong-audience" });
    expect(await tp.panel.auth.users.getUser("ada")).toBeNull();
  });

  it("refuses an expired ID token (the panel's clock two hours ahead)", async () => {
    await open({ oidc: { clockSkewSeconds: 2 * 3600 } });
    refusedWith((await signIn("ada")).res, "expired-token");
    expect(await lastLogin()).toMatchObject({ outcome: "refused", reason: "oidc: expired-token" });
  });

  it("keeps a disabled account out, and never takes over a local account of the same name", async () => {
    const panel = await open();
    expect((await signIn("otto")).res.status).toBe(200);
    await panel.auth.users.createUser({ username: "keeper", password: "correct horse battery staple", role: "admin" });
    await panel.auth.users.setDisabled("otto", true);
    refusedWith((await signIn("otto")).res, "disabled");
    expect(await lastLogin()).toMatchObject({ user: "otto", outcome: "refused", reason: "oidc: disabled" });
    await panel.auth.users.createUser({ username: "root", password: "correct horse battery staple", role: "admin" });
    refusedWith((await signIn("root")).res, "local-account");
    expect(await panel.auth.users.getUser("root")).toMatchObject({ source: "local", hasPassword: true });
  });

  it("tells the sign-in page about the button, and hides the password form with local_login = false", async () => {
    await open({}, { GPUDECK_OIDC_NAME: "Okta", GPUDECK_OIDC_LOCAL_LOGIN: "0" });
    const options = (await call(tp.panel, "session.signInOptions", { method: "GET" })).json?.result?.data;
    expect(options).toEqual({ sso: { name: "Okta", loginPath: OIDC_LOGIN_PATH }, localLogin: false });
  });

  it("sends a visitor away with a clear error when the provider cannot be reached", async () => {
    await open({}, { GPUDECK_OIDC_ISSUER: "http://127.0.0.1:9/realms/none" });
    const res = await tp.panel.handleOidc(new Request(`${PUBLIC_URL}${OIDC_LOGIN_PATH}?next=/`, { headers: headers() }));
    refusedWith(res, "provider-unreachable");
  });
});
