import { describe, expect, it } from "vitest";
import { configAssignments, parseConfigText } from "../../config/configFile";
import { groupsOf, loadOidcConfig, roleForGroups } from "./config";
import { flowIdFromCookies, safeNext } from "./flows";

const PUBLIC = "https://gpudeck.example.com";
const base = {
  GPUDECK_OIDC_ISSUER: "https://login.example.com/realms/ops/",
  GPUDECK_OIDC_CLIENT_ID: "gpudeck",
  GPUDECK_OIDC_CLIENT_SECRET: "s3cret",
  GPUDECK_OIDC_ROLES: JSON.stringify([{ group: "ml-platform", role: "admin" }]),
};

describe("[panel.oidc]", () => {
  it("reads the issue's TOML through the config file into the loader", () => {
    const toml = `
[panel]
public_url = "${PUBLIC}"

[panel.oidc]
issuer = "https://login.example.com/realms/ops"
client_id = "gpudeck"
client_secret_env = "MY_SECRET"
name = "Okta"
local_login = false

[[panel.oidc.roles]]
group = "ml-platform"
role = "admin"

[[panel.oidc.roles]]
group = "ml-oncall"
role = "operator"
units = ["gpu-a:vllm-*", "gpu-b:*"]
`;
    const env: Record<string, string | undefined> = { MY_SECRET: "from panel.env" };
    for (const a of configAssignments(parseConfigText(toml, "test.toml"), "panel", env)) if (!a.overridden) env[a.env] = a.value;
    const c = loadOidcConfig(env, PUBLIC)!;
    expect(c).toMatchObject({
      issuer: "https://login.example.com/realms/ops",
      clientSecret: "from panel.env",
      name: "Okta",
      localLogin: false,
      scopes: ["openid", "profile", "email", "groups"],
      usernameClaim: "preferred_username",
      redirectUri: `${PUBLIC}/api/auth/oidc/callback`,
      insecureLoopback: false,
    });
    expect(c.roles).toEqual([
      { group: "ml-platform", role: "admin", units: [] },
      { group: "ml-oncall", role: "operator", units: ["gpu-a:vllm-*", "gpu-b:*"] },
    ]);
  });

  it("is off without an issuer, and says what is wrong otherwise", () => {
    expect(loadOidcConfig({}, PUBLIC)).toBeNull();
    expect(() => loadOidcConfig(base, null)).toThrow(/GPUDECK_PUBLIC_URL/);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_ISSUER: "http://login.example.com" }, PUBLIC)).toThrow(/https/);
    expect(loadOidcConfig({ ...base, GPUDECK_OIDC_ISSUER: "http://127.0.0.1:8080" }, PUBLIC)?.insecureLoopback).toBe(true);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_ROLES: "" }, PUBLIC)).toThrow(/nobody could sign in/);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_ROLES: '[{"group":"g","role":"root"}]' }, PUBLIC)).toThrow(/viewer, operator or admin/);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_ROLES: '[{"group":"g","role":"admin","units":["x"]}]' }, PUBLIC)).toThrow(/for operators/);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_CLIENT_SECRET_ENV: "NOPE" }, PUBLIC)).toThrow(/NOPE .* is not set/);
    expect(() => loadOidcConfig({ ...base, GPUDECK_OIDC_SCOPES: "profile" }, PUBLIC)).toThrow(/openid/);
  });

  it("maps groups to the first matching role", () => {
    const roles = [
      { group: "a", role: "admin" as const, units: [] },
      { group: "b", role: "operator" as const, units: ["x:*"] },
    ];
    expect(roleForGroups(["b", "a"], roles)?.role).toBe("admin");
    expect(roleForGroups(["b"], roles)?.units).toEqual(["x:*"]);
    expect(roleForGroups(["c"], roles)).toBeNull();
    expect(groupsOf({ groups: "a" }, "groups")).toEqual(["a"]);
    expect(groupsOf({ groups: ["a", 3, "b"] }, "groups")).toEqual(["a", "b"]);
    expect(groupsOf({}, "groups")).toEqual([]);
  });

  it("keeps `next` on the panel and reads one flow cookie only", () => {
    expect(safeNext("/hosts/gpu-a?x=1")).toBe("/hosts/gpu-a?x=1");
    for (const bad of ["//evil.example", "/\\evil", "https://evil.example", "", null]) expect(safeNext(bad)).toBe("/");
    const id = "A".repeat(43);
    expect(flowIdFromCookies(`a=b; gpudeck_oidc=${id}`, false)).toBe(id);
    expect(flowIdFromCookies(`gpudeck_oidc=${id}; gpudeck_oidc=${id}`, false)).toBeNull();
    expect(flowIdFromCookies(`gpudeck_oidc=${id}`, true)).toBeNull();
  });
});
