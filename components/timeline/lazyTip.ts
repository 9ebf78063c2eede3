"use client";
/**
 * The timeline's tooltip code (./TimelineTip.tsx), fetched the first time the timeline is pointed
 * at or focused, so it is there when a tip opens. Kept in a module variable rather than
 * React.lazy: once loaded, a tip renders in the same pass as the event that opened it.
 */
import { useEffect, useState } from "react";

type TipModule = typeof import("./TimelineTip");

let loaded: TipModule | null = null;
let loading: Promise<TipModule> | null = null;

/** Starts (once) and awaits the download; tests await it before rendering. */
export function loadTimelineTip(): Promise<TipModule> {
  loading ??= import("./TimelineTip").then((m) => (loaded = m));
  return loading;
}

/** The tooltip's module, or null while it downloads (then this re-renders). `wanted`: a tip is open. */
export function useTimelineTip(wanted: boolean): TipModule | null {
  const [, setReady] = useState(loaded != null);
  useEffect(() => {
    if (!wanted || loaded) return;
    let alive = true;
    void loadTimelineTip().then(() => alive && setReady(true));
    return () => {
      alive = false;
    };
  }, [wanted]);
  return loaded;
}
