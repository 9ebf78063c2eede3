"use client";
/**
 * Holds the one `events.watch` stream of the page, for the scope its path shows (./scope.ts): a
 * new scope gets a new store and stream, the old one closes. On any error it reconnects with
 * backoff, resuming after the last event id it saw; the panel replays what was missed, or sends
 * a snapshot when it cannot. A stream refused because the session ended (signed out elsewhere,
 * password changed, user disabled) re-asks who is signed in at once, so the page goes to the
 * sign-in page now rather than at the next periodic check.
 */
import { useQueryClient } from "@tanstack/react-query";
import { usePathname } from "next/navigation";
import { createContext, useContext, useEffect, useState, useSyncExternalStore, type ReactNode } from "react";
import { useTRPC, useTRPCClient } from "@/components/trpc";
import { scopeForPath, scopeKey } from "./scope";
import { LiveStore } from "./store";

const LiveContext = createContext<LiveStore | null>(null);

/** Codes that retrying soon will not fix: the stream waits the longest backoff, and the page says why. */
const LASTING = new Set(["NOT_FOUND", "BAD_REQUEST", "FORBIDDEN"]);

export function LiveProvider({ children }: { children: ReactNode }) {
  const scope = scopeForPath(usePathname());
  const key = scopeKey(scope);
  const [state, setState] = useState(() => ({ key, store: new LiveStore(scope) }));
  let store = state.store;
  if (state.key !== key) {
    // another scope: a fresh store (the old stream closes in the effect's cleanup)
    store = new LiveStore(scope);
    setState({ key, store });
  }
  const client = useTRPCClient();
  const trpc = useTRPC();
  const queryClient = useQueryClient();

  useEffect(() => {
    const watched = store.scope;
    if (!watched) return;
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
    const schedule = (lasting = false) => {
      sub?.unsubscribe();
      sub = null;
      if (stopped || retry) return;
      markReconnecting();
      const delay = lasting ? 10_000 : Math.min(10_000, 500 * 2 ** attempt) * (0.75 + Math.random() * 0.5);
      attempt++;
      retry = setTimeout(() => {
        retry = null;
        connect();
      }, delay);
    };
    const connect = () => {
      sub = client.events.watch.subscribe(
        { ...watched, lastEventId: store.lastEventId },
        {
          onData: ({ id, data }) => {
            markLive();
            store.apply(id, data);
          },
          onError: (err) => {
            const code = err.data?.code;
            if (code === "UNAUTHORIZED") void queryClient.invalidateQueries({ queryKey: trpc.session.me.queryKey() });
            const lasting = code !== undefined && LASTING.has(code);
            if (lasting) store.setProblem(err.message);
            schedule(lasting);
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
