/**
 * Headers on every response of the API, which node:http serves without Next (./webBridge.ts):
 * the same list next.config.ts gives Next for everything else (./securityHeaders.test.ts keeps
 * the two equal; next.config.ts cannot import this file in an installed package). The pages'
 * Content-Security-Policy (a nonce per request) and HSTS come from proxy.ts.
 */
export const SECURITY_HEADERS: readonly { key: string; value: string }[] = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
  // no other site may embed our responses (e.g. <script src=/api/…>) or keep a handle on our window
  { key: "Cross-Origin-Resource-Policy", value: "same-origin" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
];
