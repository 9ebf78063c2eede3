/**
 * Next's proxy (formerly middleware): every page gets its own CSP nonce and, over https, HSTS
 * (server/panel/csp.ts). The API, Next's static files and the status page (which sets its own
 * policy and nonce) are left out.
 */
import { NextResponse, type NextRequest } from "next/server";
import { contentSecurityPolicy, HSTS, newNonce, servedOverHttps } from "./server/panel/csp";

export function proxy(request: NextRequest): NextResponse {
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, { dev: process.env.NODE_ENV === "development" });
  const requestHeaders = new Headers(request.headers);
  // Next reads the nonce from the request's CSP header and puts it on the scripts it renders
  requestHeaders.set("content-security-policy", csp);
  requestHeaders.set("x-nonce", nonce);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", csp);
  if (servedOverHttps(process.env.GPUDECK_PUBLIC_URL, request.nextUrl.protocol)) response.headers.set("Strict-Transport-Security", HSTS);
  return response;
}

export const config = {
  matcher: [
    {
      source: "/((?!api/|_next/static|_next/image|favicon.ico|status).*)",
      missing: [
        { type: "header", key: "next-router-prefetch" },
        { type: "header", key: "purpose", value: "prefetch" },
      ],
    },
  ],
};
