"use client";
/**
 * A part of a page drawn (and its code downloaded, with next/dynamic or React.lazy) only once it
 * comes near the view: a placeholder of about its height until then, so the page does not jump.
 * IntersectionObserver: once 48 px of it are in view (the top of a page grows while its data arrives:
 * a part just below the fold is not downloaded for that); a browser without it draws at once.
 */
import { Suspense, useEffect, useRef, useState, type ReactNode } from "react";

/**
 * `eager`: drawn now and scrolled to, wherever it is (a link that opens this part: the journal at
 * a moment picked on the timeline, a shared journal view).
 */
export function WhenVisible({
  name,
  minHeight,
  label,
  eager = false,
  children,
}: {
  name: string;
  minHeight: number;
  label: string;
  eager?: boolean;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!eager) return;
    const t = setTimeout(() => {
      setShown(true);
      box.current?.scrollIntoView({ block: "start" });
    }, 0);
    return () => clearTimeout(t);
  }, [eager]);
  useEffect(() => {
    const el = ref.current;
    if (!el || shown) return;
    if (typeof IntersectionObserver === "undefined") {
      const t = setTimeout(() => setShown(true), 0);
      return () => clearTimeout(t);
    }
    const io = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setShown(true);
      },
      { rootMargin: "0px 0px -48px 0px" },
    );
    io.observe(el);
    return () => io.disconnect();
  }, [shown]);
  const placeholder = (
    <div
      ref={shown ? undefined : ref}
      data-lazy-section={name}
      data-lazy="pending"
      style={{ minHeight }}
      className="rounded-lg border border-dashed border-zinc-200 p-3 text-sm text-zinc-500 dark:border-zinc-800 dark:text-zinc-400"
    >
      {label}
    </div>
  );
  // the code of a lazy child arrives after: the placeholder stays until then
  return <div ref={box}>{shown ? <Suspense fallback={placeholder}>{children}</Suspense> : placeholder}</div>;
}
