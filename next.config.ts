import type { NextConfig } from "next";

// The pages' Content-Security-Policy (a nonce per request) and HSTS come from proxy.ts. The same
// list is in server/panel/securityHeaders.ts for the API, which node:http serves without Next
// (a test keeps the two equal): this file imports nothing of the project, because an installed
// package loads it where the project's own files cannot be resolved from it.
const securityHeaders = [
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
  // no other site may embed our responses (e.g. <script src=/api/…>) or keep a handle on our window
  { key: "Cross-Origin-Resource-Policy", value: "same-origin" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
];

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // a second build directory lets a test run build beside a developer's running panel
  distDir: process.env.GPUDECK_DIST_DIR || ".next",
  // `npm test` type-checks the whole project once (tsc); the build need not do it again.
  typescript: { ignoreBuildErrors: true },
  reactStrictMode: true,
  allowedDevOrigins: ["127.0.0.1"],
  // @trpc/server once per process: tracked() marks events with a module-level symbol
  serverExternalPackages: ["better-sqlite3", "@node-rs/argon2", "dbus-next", "@trpc/server", "undici"],
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
