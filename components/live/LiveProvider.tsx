"use client";
/**
 * Holds the one `events.watch` stream of the page. On any error it reconnects with backoff,
 * resuming after the last event id it saw; the agent replays what was missed, or sends a
 * snapshot when it cannot (it restarted, or the gap is too old). A stream refused because the
 * session ended (signed out elsewhere, password changed, user disabled) re-asks who is signed
 * in at once, so the page goes to the sign-in page now rather than at the next periodic check.
 */
import { useQueryClient } from "@tanstack/react-query";
import { createContext, useContext, useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import { useTRPC, useTRPCClient } from "@/components/trpc";
import { LiveStore } from "./store";

const LiveContext = createContext<LiveStore | null>(null);

export function LiveProvider({ children }: { children: ReactNode }) {
  const [store] = useState(() => new LiveStore());
  const client = useTRPCClient();
  const trpc = useTRPC();
  const queryClient = useQueryClient();

  useEffect(() => {
    let stopped = false;
    let attempt = 0;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let sub: { unsubscribe(): void } | null = null;
    let staleTimer: ReturnType<typeof setTimeout> | null = null;

    const markReconnecting = () => {
      store.setConnection(store.lastEventId ? "reconnecting" : "connecting");
      staleTimer ??= setTimeout(() => store.setConnection("stale"), 10_000);
    };
    const markLive = () => {
      attempt = 0;
      if (staleTimer) clearTimeout(staleTimer);
      staleTimer = null;
      store.setConnection("live");
    };
    const schedule = () => {
      sub?.unsubscribe();
      sub = null;
      if (stopped || retry) return;
      markReconnecting();
      const delay = Math.min(10_000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
      attempt++;
      retry = setTimeout(() => {
        retry = null;
        connect();
      }, delay);
    };
    const connect = () => {
      sub = client.events.watch.subscribe(
        { lastEventId: store.lastEventId },
        {
          onData: ({ id, data }) => {
            markLive();
            store.apply(id, data);
          },
          onError: (err) => {
            if (err.data?.code === "UNAUTHORIZED") void queryClient.invalidateQueries({ queryKey: trpc.session.me.queryKey() });
            schedule();
          },
          onComplete: () => schedule(),
          onConnectionStateChange: (s) => {
            if (s.state === "connecting") markReconnecting();
          },
        },
      );
    };
    connect();
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (staleTimer) clearTimeout(staleTimer);
      sub?.unsubscribe();
    };
  }, [client, store, trpc, queryClient]);

  return <LiveContext.Provider value={store}>{children}</LiveContext.Provider>;
}

/** The live store; the component re-renders on every change. */
export function useLive(): LiveStore {
  const store = useContext(LiveContext);
  if (!store) throw new Error("useLive outside LiveProvider");
  useSyncExternalStore(store.subscribe, store.getVersion, () => 0);
  return store;
}

/** A clock that ticks every `ms` for live counters. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}
