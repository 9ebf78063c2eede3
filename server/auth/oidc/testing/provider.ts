/**
 * Test-only: a real OpenID provider (`oidc-provider`, OpenID Certified) on loopback http, with a
 * client for gpudeck and people in groups, its own login page (devInteractions: any password;
 * the login is the account), consent given up front. Used by the vitest integration tests and the
 * Playwright sign-in test (e2e/browser/oidc.spec.ts).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, importJWK, SignJWT, decodeJwt, type JWK } from "jose";
import Provider from "oidc-provider";

export interface TestPerson {
  sub: string;
  preferred_username: string;
  groups: string[];
  email?: string;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, TestPerson>;
  /** re-sign an ID token with other claims, as a provider with this key would (hostile-provider tests) */
  resign(idToken: string, changes: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

export const TEST_CLIENT_ID = "gpudeck";
export const TEST_CLIENT_SECRET = "a test client secret that is long enough";

export async function startTestProvider(options: {
  redirectUris: string[];
  postLogoutRedirectUris?: string[];
  people: TestPerson[];
  port?: number;
}): Promise<TestProvider> {
  const people = new Map(options.people.map((p) => [p.preferred_username, p]));
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: TEST_CLIENT_ID,
        client_secret: TEST_CLIENT_SECRET,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [jwk] },
    claims: { openid: ["sub"], profile: ["preferred_username", "name"], email: ["email"], groups: ["groups"] },
    scopes: ["openid", "profile", "email", "groups"],
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    cookies: { keys: ["test cookie key one two three"] },
    async findAccount(_ctx: unknown, id: string) {
      const person = [...people.values()].find((p) => p.sub === id || p.preferred_username === id);
      if (!person) return undefined;
      return { accountId: id, claims: async () => ({ ...person, sub: id }) };
    },
    // the person agreed to share with gpudeck already: no consent page
    async loadExistingGrant(ctx: {
      oidc: { client: { clientId: string }; session: { accountId: string }; provider: Provider; result?: { consent?: { grantId?: string } } };
    }) {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope("openid profile email groups");
      grant.addOIDCClaims(["preferred_username", "groups", "email", "name"]);
      await grant.save();
      return grant;
    },
  });
  server.on("request", provider.callback());
  const key = await importJWK(jwk, "RS256");
  return {
    issuer,
    clientId: TEST_CLIENT_ID,
    clientSecret: TEST_CLIENT_SECRET,
    people,
    async resign(idToken, changes) {
      const claims = { ...decodeJwt(idToken), ...changes };
      return new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "test-key", typ: "JWT" }).sign(key);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A minimal cookie jar for driving the provider's pages without a browser. */
class Jar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      this.cookies.set(pair!.slice(0, i), pair!.slice(i + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }
}

/**
 * Sign in at the provider as `login` without a browser: follow the authorization URL, post its
 * login form, and return the URL it sends the browser back to (the panel's callback).
 */
export async function signInAtProvider(authorizationUrl: string, login: string, stopAt: string): Promise<URL> {
  const jar = new Jar();
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 10; hop++) {
    if (url.href.startsWith(stopAt)) return url;
    const res = await fetch(url, { redirect: "manual", headers: { cookie: jar.header() } });
    jar.take(res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get("location")!, url);
      continue;
    }
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    if (res.status !== 200 || !action || !page.includes('name="login"'))
      throw new Error(`unexpected page at the provider (${res.status}): ${page.slice(0, 300)}`);
    const posted = await fetch(new URL(action, url), {
      method: "POST",
      redirect: "manual",
      headers: { cookie: jar.header(), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ prompt: "login", login, password: "any password" }),
    });
    jar.take(posted);
    if (posted.status < 300 || posted.status >= 400) throw new Error(`the provider's login form answered ${posted.status}`);
    url = new URL(posted.headers.get("location")!, url);
  }
  throw new Error("too many redirects at the provider");
}
