"use client";
import { useEffect, useRef, useState } from "react";

/** The width of an element in whole CSS pixels, kept current with a ResizeObserver. */
export function useElementWidth(initialWidth?: number) {
  const ref = useRef<HTMLDivElement | null>(null);
  const [width, setWidth] = useState<number>(initialWidth ?? 0);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const measure = () => setWidth(Math.floor(el.getBoundingClientRect().width));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width] as const;
}
