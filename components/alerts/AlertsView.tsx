"use client";
/**
 * `/alerts`: open alerts, silences and the history for everyone signed in; channels with their
 * delivery log, and the status page's settings, for admins.
 */
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";
import { AlertList } from "./AlertList";
import { ChannelsSection } from "./ChannelsSection";
import { MaintenanceSection } from "./MaintenanceSection";
import { SilencesSection } from "./SilencesSection";
import { StatusPageSection } from "./StatusPageSection";

export function AlertsView() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const role = me.data?.user?.role ?? null;
  const demo = me.data?.demo === true;
  return (
    <div className="space-y-8">
      <div className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Alerts</h1>
        <p className="text-sm text-zinc-500 dark:text-zinc-400">
          What went wrong on the hosts, told to the channels below whether or not anyone has this page open.
        </p>
      </div>
      <AlertList state="open" title="Open alerts" empty="Nothing is wrong right now." canAck={role === "admin" || role === "operator"} />
      <SilencesSection canSilence={role === "admin" || role === "operator"} />
      <MaintenanceSection canManage={role === "admin"} />
      <AlertList state="resolved" title="History" empty="No alerts yet." />
      {role === "admin" && !demo && <ChannelsSection />}
      {role === "admin" && <StatusPageSection />}
    </div>
  );
}
