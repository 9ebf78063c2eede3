import { describe, expect, it } from "vitest";
import { loadOidcConfig } from "../../auth/oidc/config";
import { checkOidc } from "./oidc";

const env = {
  GPUDECK_OIDC_ISSUER: "https://login.example.com/realms/ops",
  GPUDECK_OIDC_CLIENT_ID: "gpudeck",
  GPUDECK_OIDC_ROLES: '[{"group":"g","role":"viewer"}]',
};
const doc = { issuer: "https://login.example.com/realms/ops", authorization_endpoint: "a", token_endpoint: "t", jwks_uri: "j", end_session_endpoint: "e" };

describe("doctor: single sign-on", () => {
  it("checks the discovery document and the redirect URI", async () => {
    const config = loadOidcConfig(env, "https://gpudeck.example.com")!;
    const ok = await checkOidc(async () => ({ status: 200, text: JSON.stringify(doc) }), config);
    expect(ok.map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(ok[1]!.detail).toContain("https://gpudeck.example.com/api/auth/oidc/callback");
    const other = await checkOidc(async () => ({ status: 200, text: JSON.stringify({ ...doc, issuer: "https://elsewhere" }) }), config);
    expect(other[0]).toMatchObject({ status: "error" });
    const down = await checkOidc(async () => Promise.reject(new Error("connect ECONNREFUSED")), config);
    expect(down[0]).toMatchObject({ status: "error", detail: expect.stringContaining("ECONNREFUSED") });
    const plain = await checkOidc(async () => ({ status: 200, text: JSON.stringify(doc) }), loadOidcConfig(env, "http://gpudeck.example.com")!);
    expect(plain[1]).toMatchObject({ status: "error" });
  });
});
