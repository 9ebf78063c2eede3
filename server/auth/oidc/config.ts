/**
 * `[panel.oidc]` as the panel reads it, from GPUDECK_OIDC_* variables (the config file's keys become
 * those, see server/config/settings.ts):
 *   GPUDECK_OIDC_ISSUER             the provider's issuer URL (turns single sign-on on)
 *   GPUDECK_OIDC_CLIENT_ID          gpudeck's client id there
 *   GPUDECK_OIDC_CLIENT_SECRET_ENV  the variable that holds the client secret (default GPUDECK_OIDC_CLIENT_SECRET,
 *                                   kept in panel.env; none: a public client, PKCE only)
 *   GPUDECK_OIDC_NAME               the sign-in button's label (default "Company SSO")
 *   GPUDECK_OIDC_SCOPES             default openid,profile,email,groups
 *   GPUDECK_OIDC_USERNAME_CLAIM     default preferred_username
 *   GPUDECK_OIDC_GROUPS_CLAIM       default groups
 *   GPUDECK_OIDC_LOCAL_LOGIN        0: only single sign-on on the sign-in page (default 1)
 *   GPUDECK_OIDC_ROLES              JSON list of { group, role, units? }: first match wins, no match is not let in
 * The redirect URI is `<GPUDECK_PUBLIC_URL>/api/auth/oidc/callback`, so the public URL is required.
 * The issuer must be https, except on a loopback address (tests, a provider on the same machine).
 */
import { isIP } from "node:net";
import { z } from "zod";
import { isRole, type Role } from "../../contract/actors";
import { OIDC_CALLBACK_PATH } from "../../contract/oidc";
import { unitPatternProblem } from "../userFields";

export interface OidcRoleMapping {
  group: string;
  role: Role;
  /** unit patterns (host:glob allowed) for operators; [] for the others */
  units: string[];
}

export interface OidcConfig {
  issuer: string;
  clientId: string;
  /** null: a public client (PKCE only) */
  clientSecret: string | null;
  name: string;
  scopes: string[];
  usernameClaim: string;
  groupsClaim: string;
  localLogin: boolean;
  roles: OidcRoleMapping[];
  redirectUri: string;
  /** where the provider sends the browser after its own sign-out */
  postLogoutRedirectUri: string;
  /** http to a loopback issuer is allowed (else https only) */
  insecureLoopback: boolean;
}

export class OidcConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

const roleSchema = z
  .object({
    group: z.string().min(1).max(256),
    role: z.string().refine(isRole, { message: "role must be viewer, operator or admin" }),
    units: z.array(z.string()).max(100).optional(),
  })
  .strict();

export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1") return true;
  return isIP(h) === 4 && h.startsWith("127.");
}

function list(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function roles(raw: string | undefined): OidcRoleMapping[] {
  if (!raw?.trim())
    throw new OidcConfigError("GPUDECK_OIDC_ROLES is empty: with no [[panel.oidc.roles]] nobody could sign in; map at least one group to a role");
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new OidcConfigError("GPUDECK_OIDC_ROLES must be a JSON list of { group, role, units? } ([[panel.oidc.roles]] in the config file)");
  }
  const parsed = z.array(roleSchema).min(1).max(200).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new OidcConfigError(`[[panel.oidc.roles]] ${issue.path.join(".")}: ${issue.message}`);
  }
  return parsed.data.map((r, i) => {
    const units = (r.units ?? []).map((u) => u.trim()).filter(Boolean);
    for (const u of units) {
      const problem = unitPatternProblem(u);
      if (problem) throw new OidcConfigError(`[[panel.oidc.roles]] ${i}: ${problem}`);
    }
    if (units.length > 0 && r.role !== "operator")
      throw new OidcConfigError(`[[panel.oidc.roles]] ${i}: units are for operators (group ${r.group} is ${r.role})`);
    return { group: r.group, role: r.role as Role, units };
  });
}

/** null when GPUDECK_OIDC_ISSUER is unset; throws OidcConfigError with a sentence otherwise. */
export function loadOidcConfig(env: Env, publicUrl: string | null): OidcConfig | null {
  const issuer = env.GPUDECK_OIDC_ISSUER?.trim().replace(/\/+$/, "");
  if (!issuer) return null;
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch {
    throw new OidcConfigError(`GPUDECK_OIDC_ISSUER is not a URL: "${issuer}"`);
  }
  const insecureLoopback = issuerUrl.protocol === "http:" && isLoopbackHost(issuerUrl.hostname);
  if (issuerUrl.protocol !== "https:" && !insecureLoopback)
    throw new OidcConfigError("GPUDECK_OIDC_ISSUER must be an https:// URL (http only on a loopback address)");
  const clientId = env.GPUDECK_OIDC_CLIENT_ID?.trim();
  if (!clientId) throw new OidcConfigError("GPUDECK_OIDC_CLIENT_ID is required with GPUDECK_OIDC_ISSUER (gpudeck's client id at the provider)");
  if (!publicUrl)
    throw new OidcConfigError("single sign-on needs GPUDECK_PUBLIC_URL (panel.public_url): the redirect URI is <public_url>" + OIDC_CALLBACK_PATH);
  const secretVar = env.GPUDECK_OIDC_CLIENT_SECRET_ENV?.trim() || "GPUDECK_OIDC_CLIENT_SECRET";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(secretVar)) throw new OidcConfigError("GPUDECK_OIDC_CLIENT_SECRET_ENV must name an environment variable");
  const secret = env[secretVar] ?? null;
  if (env.GPUDECK_OIDC_CLIENT_SECRET_ENV?.trim() && !secret)
    throw new OidcConfigError(`${secretVar} (panel.oidc.client_secret_env) is not set: put the client secret in panel.env`);
  const scopes = list(env.GPUDECK_OIDC_SCOPES);
  const finalScopes = scopes.length > 0 ? scopes : ["openid", "profile", "email", "groups"];
  if (!finalScopes.includes("openid")) throw new OidcConfigError('GPUDECK_OIDC_SCOPES must include "openid"');
  const local = env.GPUDECK_OIDC_LOCAL_LOGIN?.trim();
  if (local && !/^(1|0|true|false|yes|no)$/i.test(local)) throw new OidcConfigError("GPUDECK_OIDC_LOCAL_LOGIN must be 1 or 0");
  const name = env.GPUDECK_OIDC_NAME?.trim() || "Company SSO";
  if (name.length > 80) throw new OidcConfigError("GPUDECK_OIDC_NAME must be at most 80 characters");
  return {
    issuer,
    clientId,
    clientSecret: secret && secret.length > 0 ? secret : null,
    name,
    scopes: finalScopes,
    usernameClaim: env.GPUDECK_OIDC_USERNAME_CLAIM?.trim() || "preferred_username",
    groupsClaim: env.GPUDECK_OIDC_GROUPS_CLAIM?.trim() || "groups",
    localLogin: !local || /^(1|true|yes)$/i.test(local),
    roles: roles(env.GPUDECK_OIDC_ROLES),
    redirectUri: `${publicUrl}${OIDC_CALLBACK_PATH}`,
    postLogoutRedirectUri: `${publicUrl}/login`,
    insecureLoopback,
  };
}

/** The first mapping whose group the person is in (order of [[panel.oidc.roles]]), or null. */
export function roleForGroups(groups: readonly string[], mappings: readonly OidcRoleMapping[]): OidcRoleMapping | null {
  const mine = new Set(groups);
  return mappings.find((m) => mine.has(m.group)) ?? null;
}

/** The groups claim as a list of names (a list, one name, or absent). */
export function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string").slice(0, 1000);
  return [];
}
