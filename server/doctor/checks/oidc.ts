/**
 * Single sign-on: the issuer's discovery document answers, names the same issuer, has the
 * endpoints the panel uses, and the redirect URI the provider must know is the panel's public URL
 * plus /api/auth/oidc/callback (https, except on loopback).
 */
import type { OidcConfig } from "../../auth/oidc/config";
import type { CheckResult, HttpGet } from "../types";

export async function checkOidc(http: HttpGet, config: OidcConfig): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const url = `${config.issuer}/.well-known/openid-configuration`;
  const id = "oidc discovery";
  try {
    const res = await http(url, { accept: "application/json" }, 5000);
    if (res.status !== 200) {
      out.push({
        id,
        status: "error",
        detail: `${url} answered HTTP ${res.status}`,
        fix: "check panel.oidc.issuer (the realm/tenant URL, without /.well-known/…)",
      });
    } else {
      const doc = JSON.parse(res.text) as Record<string, unknown>;
      const missing = ["authorization_endpoint", "token_endpoint", "jwks_uri"].filter((k) => typeof doc[k] !== "string");
      if (doc.issuer !== config.issuer) {
        out.push({
          id,
          status: "error",
          detail: `the document names issuer ${String(doc.issuer)}, not ${config.issuer}`,
          fix: "set panel.oidc.issuer exactly to the issuer the provider names",
        });
      } else if (missing.length > 0) {
        out.push({ id, status: "error", detail: `the document lacks ${missing.join(", ")}`, fix: "point panel.oidc.issuer at an OpenID Connect provider" });
      } else {
        const logout =
          typeof doc.end_session_endpoint === "string"
            ? "; sign-out also ends the provider's session"
            : "; no end_session_endpoint: sign-out ends the gpudeck session only";
        out.push({ id, status: "ok", detail: `${config.issuer} answers${logout}` });
      }
    }
  } catch (err) {
    out.push({
      id,
      status: "error",
      detail: `${url}: ${(err as Error).message}`,
      fix: "check that the panel can reach the issuer (DNS, proxy, firewall) and trusts its certificate (NODE_EXTRA_CA_CERTS)",
    });
  }
  const redirect = new URL(config.redirectUri);
  const loopback = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/.test(redirect.hostname);
  out.push(
    redirect.protocol === "https:" || loopback
      ? { id: "oidc redirect URI", status: "ok", detail: `register ${config.redirectUri} (and ${config.postLogoutRedirectUri} for sign-out) at the provider` }
      : {
          id: "oidc redirect URI",
          status: "error",
          detail: `${config.redirectUri} is plain http: providers refuse it, and the sign-in code would travel in clear`,
          fix: "set panel.public_url to the panel's https:// URL",
        },
  );
  return out;
}
