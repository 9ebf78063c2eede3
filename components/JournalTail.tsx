"use client";
/**
 * The unit's journal: the last lines, then live lines while "Follow" is on; with filters (time
 * range, priority, text, boot: ./journal/JournalFilterBar.tsx, kept in the URL) the matching
 * lines and a histogram per minute. Following pauses while the reader scrolls back and resumes
 * at the bottom. "Copy link" reopens the same view; "Download" saves the range as text (audited).
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { usePathname, useSearchParams } from "next/navigation";
import { Suspense, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { formatTime } from "@/server/contract/format";
import { useTRPC, useTRPCClient } from "@/components/trpc";
import { replaceSearch } from "@/components/urlState";
import { JournalFilterBar } from "@/components/journal/JournalFilterBar";
import { JournalHistogram } from "@/components/journal/JournalHistogram";
import { frozen, isFiltered, liveFilter, paramsWithView, resolved, viewFromParams, type JournalView } from "@/components/journal/journalView";
import type { JournalEntry } from "@/server/contract/types";

const KEEP = 1000;
const NONE: JournalEntry[] = [];

interface LiveLines {
  /** the backlog these follow */
  base: JournalEntry[] | undefined;
  lines: JournalEntry[];
  /** arrived while the reader was scrolled back */
  held: JournalEntry[];
}
const SEARCH_LIMIT = 1000;

const PRIORITY_CLASS = (p: number) =>
  p <= 3
    ? "text-red-700 dark:text-red-400 font-semibold"
    : p === 4
      ? "text-amber-700 dark:text-amber-400"
      : p === 5
        ? "text-zinc-900 dark:text-zinc-100 font-medium"
        : "text-zinc-700 dark:text-zinc-300";
const PRIORITY_NAME = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];
const button = "rounded border border-zinc-300 px-2 py-1 text-xs hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800";

function useJournalView(): [JournalView, (v: JournalView) => void] {
  const params = useSearchParams();
  const pathname = usePathname();
  const view = useMemo(() => viewFromParams(new URLSearchParams(params.toString())), [params]);
  const set = useCallback((v: JournalView) => replaceSearch(pathname, paramsWithView(new URLSearchParams(window.location.search), v)), [pathname]);
  return [view, set];
}

/** The view is in the URL (useSearchParams): a Suspense boundary keeps a prerendered page valid. */
export function JournalTail({ host, name }: { host: string; name: string }) {
  return (
    <Suspense fallback={<p className="text-sm text-zinc-500 dark:text-zinc-400">Loading journal…</p>}>
      <JournalTailView host={host} name={name} />
    </Suspense>
  );
}

function JournalTailView({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const [view, setViewInUrl] = useJournalView();
  const filtered = isFiltered(view);
  // a relative range is resolved when the view changes (its follow brings the rest)
  const [nowMs, setNowMs] = useState(() => Date.now());
  const setView = useCallback(
    (v: JournalView) => {
      setNowMs(Date.now());
      setViewInUrl(v);
    },
    [setViewInUrl],
  );
  const range = useMemo(() => resolved(view, nowMs), [view, nowMs]);
  const filters = { priority: view.priority, grep: view.grep, boot: view.boot, kernelPci: view.kernelPci, ...range };
  const [follow, setFollow] = useState(true);
  const [pinnedToBottom, setPinnedToBottom] = useState(true);
  // live lines after this backlog (a new backlog starts them afresh)
  const [live, setLive] = useState<LiveLines>({ base: undefined, lines: [], held: [] });
  const [streamError, setStreamError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const backlog = useQuery(trpc.units.journal.queryOptions(filtered ? { host, name, ...filters, limit: SEARCH_LIMIT } : { host, name, lines: 200 }));
  const histogram = useQuery(trpc.units.journalHistogram.queryOptions({ host, name, ...filters }, { enabled: filtered }));
  const download = useMutation(trpc.units.downloadJournal.mutationOptions());
  const box = useRef<HTMLDivElement>(null);
  // live lines only where the range is open at the end (now is in it)
  const canFollow = !filtered || range.until === undefined || range.until >= nowMs;
  const following = follow && canFollow;
  const paused = following && !pinnedToBottom;
  const pausedRef = useRef(paused);
  useEffect(() => {
    pausedRef.current = paused;
  }, [paused]);
  const keepLive = useMemo(() => liveFilter(view), [view]);
  const mine = live.base === backlog.data;
  const liveLines = mine ? live.lines : NONE;
  const held = mine ? live.held : NONE;

  const lines = useMemo(() => {
    const seen = new Set<string>();
    const all = [...(backlog.data ?? []), ...liveLines].filter((l) => !seen.has(l.cursor) && seen.add(l.cursor));
    return all.length > KEEP ? all.slice(all.length - KEEP) : all;
  }, [backlog.data, liveLines]);

  useEffect(() => {
    const base = backlog.data;
    if (!following || !base) return;
    let lastCursor = base.at(-1)?.cursor ?? null;
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
            if (!keepLive(data)) return;
            // scrolled back: new lines wait, the reader's place stays put
            const hold = pausedRef.current;
            setLive((prev) => {
              const from = prev.base === base ? prev : { base, lines: [], held: [] };
              const add = (list: JournalEntry[]) => [...list, data].slice(-KEEP);
              return hold ? { ...from, held: add(from.held) } : { ...from, lines: add(from.lines) };
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
  }, [following, backlog.data, client, host, name, keepLive]);

  const resume = () => {
    setLive((prev) => ({ ...prev, lines: [...prev.lines, ...prev.held].slice(-KEEP), held: [] }));
    setPinnedToBottom(true);
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  };

  useEffect(() => {
    if (following && pinnedToBottom && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, following, pinnedToBottom]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atBottom !== pinnedToBottom) {
      setPinnedToBottom(atBottom);
      if (atBottom && held.length > 0) resume();
    }
  };

  const copyLink = async () => {
    const url = new URL(window.location.href);
    url.search = paramsWithView(url.searchParams, frozen(view, Date.now())).toString();
    url.hash = "journal";
    try {
      await navigator.clipboard.writeText(url.toString());
      setNotice("Link copied: it reopens this view.");
    } catch {
      setNotice(url.toString());
    }
  };

  const save = () => {
    download.mutate(
      { host, name, ...filters },
      {
        onSuccess: (r) => {
          const blob = new Blob([r.text], { type: "text/plain;charset=utf-8" });
          const a = document.createElement("a");
          a.href = URL.createObjectURL(blob);
          a.download = `${host}-${name}-journal.txt`;
          a.click();
          setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
          setNotice(`Downloaded ${r.lines} lines${r.cut ? " — cut: the range holds more (the newest 50,000 are in the file)" : ""}.`);
        },
      },
    );
  };

  return (
    <section id="journal" aria-labelledby="journal-heading" className="scroll-mt-4 rounded-lg border border-zinc-200 dark:border-zinc-800">
      <div className="flex flex-wrap items-center gap-2 border-b border-zinc-200 px-4 py-2 dark:border-zinc-800">
        <h2 id="journal-heading" className="text-sm font-semibold">
          Journal
        </h2>
        {streamError && <span className="text-xs text-red-700 dark:text-red-400">stream interrupted: {streamError} — retrying</span>}
        <div className="ml-auto flex flex-wrap items-center gap-2">
          <button type="button" className={button} onClick={() => void copyLink()} data-testid="journal-copy-link">
            Copy link
          </button>
          <button type="button" className={button} onClick={save} disabled={download.isPending} data-testid="journal-download">
            {download.isPending ? "Preparing…" : "Download"}
          </button>
          <label className="flex items-center gap-2 text-sm">
            <input type="checkbox" checked={follow} disabled={!canFollow} onChange={(e) => setFollow(e.target.checked)} className="h-4 w-4" />
            Follow
          </label>
        </div>
      </div>
      <JournalFilterBar key={view.grep ?? ""} view={view} onChange={setView} />
      {(notice || download.error) && (
        <p role="status" className="border-b border-zinc-200 px-4 py-1 text-xs break-all dark:border-zinc-800" data-testid="journal-notice">
          {download.error ? <span className="text-red-700 dark:text-red-400">Download failed: {download.error.message}</span> : notice}
        </p>
      )}
      {filtered && histogram.data && <JournalHistogram data={histogram.data} />}
      {filtered && histogram.error && <p className="px-4 py-1 text-xs text-red-700 dark:text-red-400">Histogram unavailable: {histogram.error.message}</p>}
      {paused && (
        <div
          className="flex items-center gap-2 border-b border-amber-300 bg-amber-50 px-4 py-1 text-xs text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
          data-testid="journal-paused"
        >
          Following paused while you read back{held.length > 0 ? ` · ${held.length} new line${held.length === 1 ? "" : "s"}` : ""}
          <button type="button" className={`${button} ml-auto`} onClick={resume}>
            Resume
          </button>
        </div>
      )}
      {/* scrollable: a tab stop, so the keyboard can scroll it (axe: scrollable-region-focusable) */}
      <div
        ref={box}
        tabIndex={0}
        role="region"
        aria-label="Journal lines"
        className="max-h-80 overflow-auto px-4 py-2 font-mono text-xs leading-5 sm:max-h-[28rem]"
        data-testid="journal"
        aria-live="off"
        onScroll={onScroll}
      >
        {backlog.isLoading && <p className="text-zinc-500 dark:text-zinc-400">Loading journal…</p>}
        {backlog.error && <p className="text-red-700 dark:text-red-400">Journal unavailable: {backlog.error.message}</p>}
        {lines.length === 0 && backlog.data && (
          <p className="text-zinc-500 dark:text-zinc-400">{filtered ? "No journal lines match these filters." : "No journal lines for this unit."}</p>
        )}
        {filtered && backlog.data?.length === SEARCH_LIMIT && (
          <p className="text-zinc-500 dark:text-zinc-400">Showing the newest {SEARCH_LIMIT} matching lines; narrow the range or download it for all.</p>
        )}
        {lines.map((l) => (
          <div key={l.cursor} className={`break-all whitespace-pre-wrap ${PRIORITY_CLASS(l.priority)}`} data-testid="journal-line">
            <time className="text-zinc-500 dark:text-zinc-400" dateTime={new Date(l.atUsec / 1000).toISOString()}>
              {formatTime(l.atUsec / 1000)}
            </time>{" "}
            <span className="sr-only">{PRIORITY_NAME[l.priority] ?? l.priority}</span>
            {l.unit === "kernel" && <span className="text-zinc-500 dark:text-zinc-400">kernel: </span>}
            {l.pid !== null && <span className="text-zinc-500 dark:text-zinc-400">[{l.pid}] </span>}
            {l.message}
          </div>
        ))}
      </div>
    </section>
  );
}
