"use client";
/**
 * `/hosts`: the agents this panel watches. Everyone signed in sees each host's connection and
 * where it is configured; admins also see its URL and token hint, and add, edit and remove the
 * hosts stored in the panel (those from GPUDECK_AGENTS_FILE / GPUDECK_AGENT_URL are read-only).
 * Every change is in the audit log. Connection states follow the fleet's live stream.
 */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { OkNote } from "@/components/auth/users/notes";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { AddHostForm } from "./AddHostForm";
import { HostEntryCard } from "./HostEntryCard";
import { useRefreshHosts } from "./hostsData";

export function HostsView() {
  const trpc = useTRPC();
  const live = useLive();
  const now = useNow();
  const refresh = useRefreshHosts();
  const me = useQuery(trpc.session.me.queryOptions());
  const hosts = useQuery(trpc.hosts.list.queryOptions(undefined, { refetchInterval: 30_000 }));
  const [removed, setRemoved] = useState<string | null>(null);
  // a demo panel shows only its simulated hosts: the server refuses changes there
  const demo = me.data?.demo === true;
  const admin = me.data?.user?.role === "admin";
  const manages = admin && !demo;

  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Hosts</h1>
        <p className="text-sm text-zinc-500 dark:text-zinc-400">
          The GPU hosts&apos; agents this panel watches.
          {demo
            ? " Demo mode shows only its simulated hosts; add hosts on a panel with sign-in."
            : admin
              ? " Changes are in the audit log."
              : " Admins add and remove them."}
        </p>
      </div>
      {manages && <AddHostForm />}
      {removed && <OkNote>{removed}</OkNote>}
      {hosts.error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          {hosts.error.message}
        </p>
      ) : !hosts.data ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>
      ) : hosts.data.length === 0 ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">No hosts yet.</p>
      ) : (
        <ul className="grid grid-cols-1 gap-3 lg:grid-cols-2" aria-label="Hosts" data-testid="host-entries">
          {hosts.data.map((h) => (
            <HostEntryCard
              key={h.name}
              host={h}
              live={live.host(h.name)?.summary ?? undefined}
              admin={admin}
              manages={manages}
              nowMs={now}
              onChanged={() => void refresh()}
              onRemoved={(name) => {
                setRemoved(`Removed ${name}.`);
                live.forgetHost(name);
                void refresh();
              }}
            />
          ))}
        </ul>
      )}
    </div>
  );
}
