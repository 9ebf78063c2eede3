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
import { createContext, useContext, useEffect, useMemo, useState, useSyncExternalStore, type ReactNode } from "react";
import { useTRPC, useTRPCClient } from "@/components/trpc";
import { scopeForPath, scopeKey } from "./scope";
import { LiveStore } from "./store";

/** the page's store, and an empty one of the same scope: what the server rendered (it holds no stream) */
const LiveContext = createContext<{ store: LiveStore; initial: LiveStore } | null>(null);

/** Codes that retrying soon will not fix: the stream waits the longest backoff, and the page says why. */
const LASTING = new Set(["NOT_FOUND", "BAD_REQUEST", "FORBIDDEN"]);

export function LiveProvider({ children }: { children: ReactNode }) {
  const scope = scopeForPath(usePathname());
  const key = scopeKey(scope);
  const [state, setState] = useState(() => ({ key, store: new LiveStore(scope), initial: new LiveStore(scope) }));
  let { store, initial } = state;
  if (state.key !== key) {
    // another scope: a fresh store (the old stream closes in the effect's cleanup)
    store = new LiveStore(scope);
    initial = new LiveStore(scope);
    setState({ key, store, initial });
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

  const value = useMemo(() => ({ store, initial }), [store, initial]);
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

const HYDRATING = -1;

/**
 * The live store; the component re-renders on every change. While the server renders and while
 * the browser hydrates that HTML, it is the empty store the server had: a part of the page that
 * hydrates late (a Suspense boundary) may do so after the stream's first events arrived, and
 * rendering those would not match the server's HTML (React #418). React renders again with the
 * real store right after hydrating.
 */
export function useLive(): LiveStore {
  const ctx = useContext(LiveContext);
  if (!ctx) throw new Error("useLive outside LiveProvider");
  const version = useSyncExternalStore(ctx.store.subscribe, ctx.store.getVersion, () => HYDRATING);
  return version === HYDRATING ? ctx.initial : ctx.store;
}

const noSubscription = () => () => {};

/** false while the server renders and while the browser hydrates; true from the next render on. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscription,
    () => true,
    () => false,
  );
}

/**
 * A clock that ticks every `ms` for live counters. NaN while the server renders and the browser
 * hydrates: the two clocks differ, so a relative time ("for 42 min 17 s") computed from it would
 * not match; the formatters write "—" for NaN, and the real time follows right after hydration.
 */
export function useNow(ms = 1000): number {
  const hydrated = useHydrated();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return hydrated ? now : NaN;
}
