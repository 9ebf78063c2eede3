/**
 * The request guard's Origin refusal: it names the origin it saw, the ones it expected, and what
 * to set (panel.public_url / GPUDECK_PUBLIC_URL, a Host header with its port), so an action
 * refused behind a reverse proxy says how to fix it. (./hostile.test.ts drives the whole handler.)
 */
import { describe, expect, it } from "vitest";
import { guardRequest, originRefusal } from "./requestGuard";

const post = (headers: Record<string, string>) =>
  new Request("http://127.0.0.1:3000/api/trpc/units.restart", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{}" });

describe("the Origin refusal", () => {
  it("behind nginx with `Host $host` on port 8443: the port is gone from Host, and the sentence says so", () => {
    const req = post({ host: "gpudeck.example.com", origin: "https://gpudeck.example.com:8443" });
    const r = guardRequest(req, { allowedOrigins: [], allowedHosts: ["gpudeck.example.com"] });
    expect(r).toMatchObject({ ok: false, status: 403, code: "FORBIDDEN" });
    const message = r.ok ? "" : r.message;
    expect(message.startsWith("Cross-origin request refused.")).toBe(true);
    expect(message).toContain("origin 'https://gpudeck.example.com:8443'");
    expect(message).toContain("'http(s)://gpudeck.example.com' (the Host header");
    expect(message).toContain("panel.public_url (GPUDECK_PUBLIC_URL)");
    expect(message).toContain("proxy_set_header Host $http_host");
  });

  it("names the configured origins it expected", () => {
    const req = post({ host: "127.0.0.1:3000", origin: "https://evil.example" });
    expect(originRefusal(req, ["https://gpudeck.example.com"])).toMatch(
      /came from origin 'https:\/\/evil\.example'; this panel expected 'https:\/\/gpudeck\.example\.com' or 'http\(s\):\/\/127\.0\.0\.1:3000'/,
    );
  });

  it("without Origin, says the browser called it another site's request", () => {
    const req = post({ host: "127.0.0.1:3000", "sec-fetch-site": "cross-site" });
    const r = guardRequest(req, { allowedOrigins: [], allowedHosts: [] });
    expect(r.ok ? "" : r.message).toContain("a page of another site (Sec-Fetch-Site: cross-site, no Origin)");
  });

  it("the Host's origin, a configured one, and the port kept by `$http_host` pass", () => {
    const policy = { allowedOrigins: ["https://gpudeck.example.com"], allowedHosts: ["gpudeck.example.com"] };
    expect(guardRequest(post({ host: "gpudeck.example.com:8443", origin: "https://gpudeck.example.com:8443" }), policy)).toEqual({ ok: true });
    expect(guardRequest(post({ host: "127.0.0.1:3000", origin: "https://gpudeck.example.com" }), policy)).toEqual({ ok: true });
  });

  it("a long Origin is cut short in the sentence", () => {
    const long = `https://${"a".repeat(5000)}.example`;
    expect(originRefusal(post({ host: "127.0.0.1:3000", origin: long }), []).length).toBeLessThan(800);
  });
});
