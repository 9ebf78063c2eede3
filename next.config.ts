import type { NextConfig } from "next";

import { SECURITY_HEADERS } from "./server/panel/securityHeaders";

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
    return [{ source: "/:path*", headers: [...SECURITY_HEADERS] }];
  },
};

export default nextConfig;
