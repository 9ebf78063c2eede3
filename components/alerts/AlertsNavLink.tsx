"use client";
/**
 * The header's Alerts link, for everyone signed in, with the number of open alerts (polled every
 * 30 s; "200+" past a page of them). Nothing on the sign-in pages.
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "@/components/trpc";

const PAGE = 200;

export function AlertsNavLink({ className }: { className: string }) {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions(undefined, { staleTime: 30_000 }));
  const signedIn = me.data?.user != null;
  const open = useQuery(trpc.alerts.list.queryOptions({ state: "open", limit: PAGE }, { enabled: signedIn, refetchInterval: 30_000, retry: false }));
  if (!signedIn) return null;
  const count = open.data?.alerts.length ?? null;
  const countText = count == null ? null : count >= PAGE ? `${PAGE}+` : String(count);
  return (
    <Link href="/alerts" className={`${className} inline-flex items-center gap-1`} data-testid="nav-alerts">
      Alerts
      {countText && count! > 0 && (
        <span className="rounded-full bg-red-700 px-1.5 text-xs font-semibold text-white tabular-nums" data-testid="nav-alerts-count">
          {countText}
          <span className="sr-only"> open</span>
        </span>
      )}
    </Link>
  );
}
