import type { Metadata, Viewport } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { AlertsNavLink } from "@/components/alerts/AlertsNavLink";
import { AuditNavLink, HostsNavLink, UserMenu, UsersNavLink } from "@/components/auth/UserMenu";
import { ConnectionIndicator } from "@/components/ConnectionIndicator";
import { LiveProvider } from "@/components/live/LiveProvider";
import { Providers } from "@/components/trpc";
import { loadPanelConfig } from "@/server/panel/config";
import "./globals.css";

export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "gpudeck",
  description: "Control panel for GPU inference services run by systemd",
  referrer: "no-referrer",
  // named, so browsers do not ask for /favicon.ico (a 404 on every first load)
  icons: { icon: [{ url: "/icon.svg", type: "image/svg+xml" }], apple: "/icon-192.png" },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  themeColor: [
    { media: "(prefers-color-scheme: light)", color: "#ffffff" },
    { media: "(prefers-color-scheme: dark)", color: "#09090b" },
  ],
};

export default function RootLayout({ children }: { children: ReactNode }) {
  // config only: the panel router lives in the route handler's module graph
  const { demo } = loadPanelConfig();
  return (
    <html lang="en">
      <body className="min-h-screen bg-white text-zinc-900 antialiased dark:bg-zinc-950 dark:text-zinc-100">
        {demo && (
          <div role="note" data-testid="demo-banner" className="bg-amber-300 px-4 py-1 text-center text-sm font-semibold text-amber-950">
            Demo mode — simulated hosts; no login. Nothing here touches a real system.
          </div>
        )}
        <Providers>
          <LiveProvider>
            <header className="sticky top-0 z-10 border-b border-zinc-200 bg-white/90 backdrop-blur dark:border-zinc-800 dark:bg-zinc-950/90">
              {/* wraps on a phone rather than letting the status and the user menu overlap; the
                  user menu's height (a 36 px button) is kept before the session is known, so the page does not jump */}
              <nav
                className="mx-auto flex min-h-[3.25rem] max-w-6xl flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2 text-sm sm:flex-nowrap sm:gap-4 sm:px-4"
                aria-label="Main"
              >
                <Link href="/" className="font-semibold tracking-tight">
                  gpudeck
                </Link>
                <Link href="/" className="hidden text-zinc-600 hover:text-zinc-900 sm:inline dark:text-zinc-400 dark:hover:text-zinc-100">
                  Fleet
                </Link>
                <Link href="/gpus" className="text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100">
                  GPUs
                </Link>
                <AlertsNavLink className="text-zinc-600 hover:text-zinc-900 dark:text-zinc-400 dark:hover:text-zinc-100" />
                <AuditNavLink />
                <HostsNavLink />
                <UsersNavLink />
                <span className="ml-auto min-w-0">
                  <ConnectionIndicator />
                </span>
                <UserMenu />
              </nav>
            </header>
            <main className="mx-auto max-w-6xl px-4 py-5">{children}</main>
          </LiveProvider>
        </Providers>
      </body>
    </html>
  );
}
