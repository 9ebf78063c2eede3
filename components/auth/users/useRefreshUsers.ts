"use client";
import { useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";

/** Refetch the user list after a change (the server's answer is the truth). */
export function useRefreshUsers() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
}
