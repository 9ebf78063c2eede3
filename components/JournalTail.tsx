"use client";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { formatTime } from "@/server/contract/format";
import { useTRPC, useTRPCClient } from "@/components/trpc";
import type { JournalEntry } from "@/server/contract/types";

const KEEP = 500;

const PRIORITY_CLASS = (p: number) =>
  p <= 3
    ? "text-red-700 dark:text-red-400 font-semibold"
    : p === 4
      ? "text-amber-700 dark:text-amber-400"
      : p === 5
        ? "text-zinc-900 dark:text-zinc-100 font-medium"
        : "text-zinc-700 dark:text-zinc-300";
const PRIORITY_NAME = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];

/** The unit's journal: the last lines, then live lines while "Follow" is on. */
export function JournalTail({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const [follow, setFollow] = useState(true);
  const [liveLines, setLiveLines] = useState<JournalEntry[]>([]);
  const [streamError, setStreamError] = useState<string | null>(null);
  const backlog = useQuery(trpc.units.journal.queryOptions({ host, name, lines: 200 }));
  const box = useRef<HTMLDivElement>(null);

  const lines = useMemo(() => {
    const seen = new Set<string>();
    const all = [...(backlog.data ?? []), ...liveLines].filter((l) => !seen.has(l.cursor) && seen.add(l.cursor));
    return all.length > KEEP ? all.slice(all.length - KEEP) : all;
  }, [backlog.data, liveLines]);

  useEffect(() => {
    if (!follow || !backlog.data) return;
    let lastCursor = backlog.data.at(-1)?.cursor ?? null;
    let retry: ReturnType<typeof setTimeout> | null = null;
    let sub: { unsubscribe(): void } | null = null;
    let stopped = false;
    const connect = () => {
      sub = client.units.followJournal.subscribe(
        { host, name, lastEventId: lastCursor },
        {
          onData: ({ data }) => {
            setStreamError(null);
            lastCursor = data.cursor;
            setLiveLines((prev) => {
              const next = [...prev, data];
              return next.length > KEEP ? next.slice(next.length - KEEP) : next;
            });
          },
          onError: (err) => {
            setStreamError(err.message);
            sub?.unsubscribe();
            if (!stopped) retry = setTimeout(connect, 3000);
          },
        },
      );
    };
    connect();
    return () => {
      stopped = true;
      if (retry) clearTimeout(retry);
      sub?.unsubscribe();
    };
  }, [follow, backlog.data, client, host, name]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  return (
    <section aria-labelledby="journal-heading" className="rounded-lg border border-zinc-200 dark:border-zinc-800">
      <div className="flex items-center gap-3 border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
        <h2 id="journal-heading" className="text-sm font-semibold">
          Journal
        </h2>
        {streamError && <span className="text-xs text-red-700 dark:text-red-400">stream interrupted: {streamError} — retrying</span>}
        <label className="ml-auto flex items-center gap-2 text-sm">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} className="h-4 w-4" />
          Follow
        </label>
      </div>
      {/* scrollable: a tab stop, so the keyboard can scroll it (axe: scrollable-region-focusable) */}
      <div
        ref={box}
        tabIndex={0}
        role="region"
        aria-label="Journal lines"
        className="max-h-80 overflow-auto px-4 py-2 font-mono text-xs leading-5"
        data-testid="journal"
        aria-live="off"
      >
        {backlog.isLoading && <p className="text-zinc-500 dark:text-zinc-400">Loading journal…</p>}
        {backlog.error && <p className="text-red-700">Journal unavailable: {backlog.error.message}</p>}
        {lines.length === 0 && backlog.data && <p className="text-zinc-500 dark:text-zinc-400">No journal lines for this unit.</p>}
        {lines.map((l) => (
          <div key={l.cursor} className={`whitespace-pre-wrap break-all ${PRIORITY_CLASS(l.priority)}`} data-testid="journal-line">
            <time className="text-zinc-500 dark:text-zinc-400" dateTime={new Date(l.atUsec / 1000).toISOString()}>
              {formatTime(l.atUsec / 1000)}
            </time>{" "}
            <span className="sr-only">{PRIORITY_NAME[l.priority] ?? l.priority}</span>
            {l.pid !== null && <span className="text-zinc-500 dark:text-zinc-400">[{l.pid}] </span>}
            {l.message}
          </div>
        ))}
      </div>
    </section>
  );
}
