"use client";
/** The Hosts page's data: `hosts.list` (with url and token hint for admins) and its refetch after a change. */
import { useQueryClient } from "@tanstack/react-query";
import type { inferRouterOutputs } from "@trpc/server";
import { useTRPC } from "@/components/trpc";
import type { PanelRouter } from "@/server/panel/router";

export type HostEntry = inferRouterOutputs<PanelRouter>["hosts"]["list"][number];

export function useRefreshHosts() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.hosts.list.queryKey() });
}
