/**
 * How people reach the panel: behind a TLS reverse proxy (an https public URL), or on loopback
 * only. Plain HTTP on another address sends passwords and session cookies in clear.
 */
import type { CheckResult } from "../types";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export function checkPublicUrl(publicUrl: string | null, listenHost: string): CheckResult {
  const id = "public URL";
  if (publicUrl?.startsWith("https://")) return { id, status: "ok", detail: `${publicUrl} (TLS; session cookies are Secure)` };
  const fix =
    'put the panel behind a TLS reverse proxy (README: "Put the panel behind a reverse proxy"), keep panel.listen on 127.0.0.1, and set panel.public_url to its https:// URL';
  if (!LOOPBACK.test(listenHost)) {
    return {
      id,
      status: "warn",
      detail: `the panel listens on ${listenHost} over plain HTTP${publicUrl ? ` (${publicUrl})` : ""}: passwords and session cookies travel in clear`,
      fix,
    };
  }
  if (publicUrl) return { id, status: "warn", detail: `${publicUrl} is not https: session cookies are not Secure`, fix };
  return { id, status: "ok", detail: `the panel listens on ${listenHost} only (reach it through a TLS reverse proxy or an SSH tunnel)` };
}
