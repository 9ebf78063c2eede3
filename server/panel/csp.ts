/**
 * The pages' Content-Security-Policy, with a fresh nonce per request (root proxy.ts sets it):
 * scripts run only with that nonce (Next puts it on its own scripts when it finds it in the
 * request's CSP header) or when loaded by one ('strict-dynamic'), never inline without it. Styles
 * keep 'unsafe-inline': React's style attributes and the charts need it, and CSS cannot run code.
 * Strict-Transport-Security goes out when the panel is served over https (GPUDECK_PUBLIC_URL
 * https://…, or a request that arrived over TLS).
 */
import { randomBytes } from "node:crypto";

export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

export function contentSecurityPolicy(nonce: string, options: { dev?: boolean } = {}): string {
  return [
    "default-src 'self'",
    // React's dev build evaluates code for its error overlays; production needs no eval
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${options.dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** One year; subdomains are left alone (the panel may share a domain with hosts that are not https). */
export const HSTS = "max-age=31536000";

export function servedOverHttps(publicUrl: string | undefined, requestProtocol: string): boolean {
  return requestProtocol === "https:" || (publicUrl?.trim().toLowerCase().startsWith("https://") ?? false);
}
