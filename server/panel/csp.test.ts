import { NextRequest } from "next/server";
import { afterEach, describe, expect, it } from "vitest";
import { config, proxy } from "../../proxy";
import nextConfig from "../../next.config";
import { contentSecurityPolicy, servedOverHttps } from "./csp";

const saved = process.env.GPUDECK_PUBLIC_URL;
afterEach(() => {
  if (saved === undefined) delete process.env.GPUDECK_PUBLIC_URL;
  else process.env.GPUDECK_PUBLIC_URL = saved;
});

function scriptSrc(csp: string): string {
  return csp.split("; ").find((d) => d.startsWith("script-src "))!;
}

describe("the pages' Content-Security-Policy", () => {
  it("allows scripts only with a per-request nonce: no 'unsafe-inline' for scripts", () => {
    const csp = contentSecurityPolicy("abc123==");
    expect(scriptSrc(csp)).toBe("script-src 'self' 'nonce-abc123==' 'strict-dynamic'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(contentSecurityPolicy("n", { dev: true })).toContain("'unsafe-eval'");
  });

  it("proxy: a fresh nonce in the response's CSP and in the request header Next reads it from", async () => {
    const a = proxy(new NextRequest("http://127.0.0.1:3000/units"));
    const b = proxy(new NextRequest("http://127.0.0.1:3000/units"));
    const csp = a.headers.get("content-security-policy")!;
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(b.headers.get("content-security-policy")).not.toContain(nonce);
    expect(scriptSrc(csp)).not.toContain("unsafe-inline");
    // NextResponse.next({ request: { headers } }) hands the request headers on like this
    expect(a.headers.get("x-middleware-request-content-security-policy")).toBe(csp);
    expect(a.headers.get("x-middleware-request-x-nonce")).toBe(nonce);
  });

  it("HSTS only when the panel is served over https", () => {
    delete process.env.GPUDECK_PUBLIC_URL;
    expect(proxy(new NextRequest("http://127.0.0.1:3000/")).headers.get("strict-transport-security")).toBeNull();
    expect(proxy(new NextRequest("https://panel.example/")).headers.get("strict-transport-security")).toBe("max-age=31536000");
    process.env.GPUDECK_PUBLIC_URL = "https://gpudeck.example";
    expect(proxy(new NextRequest("http://127.0.0.1:3000/")).headers.get("strict-transport-security")).toBe("max-age=31536000");
    expect(servedOverHttps("http://x", "http:")).toBe(false);
  });

  it("leaves the API, static files and the status page (its own nonce) alone", () => {
    const re = new RegExp(`^${config.matcher[0]!.source}$`);
    for (const p of ["/", "/units/vllm-a.service", "/login", "/hosts"]) expect(re.test(p), p).toBe(true);
    for (const p of ["/api/trpc/units.list", "/_next/static/chunks/a.js", "/status", "/status/abc"]) expect(re.test(p), p).toBe(false);
  });

  it("next.config sends no second, weaker CSP with 'unsafe-inline' scripts", async () => {
    const all = (await nextConfig.headers!()).flatMap((h) => h.headers);
    const csp = all.filter((h) => h.key.toLowerCase() === "content-security-policy");
    for (const h of csp) expect(scriptSrc(h.value) ?? "").not.toContain("'unsafe-inline'");
  });
});
