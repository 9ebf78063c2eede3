"use client";
/** A small banner on a unit's page while a planned maintenance window covers it: its alerts are recorded, not sent. */
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";
import { matchesUnitPatterns } from "@/server/contract/unitGlobs";

export function MaintenanceBanner({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const list = useQuery(trpc.maintenance.list.queryOptions(undefined, { refetchInterval: 30_000, retry: false }));
  const now = (list.data ?? []).filter((w) => w.phase === "now" && w.current && matchesUnitPatterns(name, host, w.units));
  if (now.length === 0) return null;
  const until = Math.max(...now.map((w) => w.current!.endsAtMs));
  return (
    <p
      role="status"
      data-testid="maintenance-banner"
      className="rounded-md border border-sky-300 bg-sky-50 px-3 py-2 text-sm text-sky-900 dark:border-sky-800 dark:bg-sky-950 dark:text-sky-200"
    >
      Planned maintenance ({now.map((w) => w.name).join(", ")}) until {new Date(until).toLocaleString([], { dateStyle: "medium", timeStyle: "short" })}: its
      alerts are recorded, not sent.
    </p>
  );
}
