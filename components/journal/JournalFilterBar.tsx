"use client";
/**
 * The journal's filter bar: time range, priority, text, boot. Changes go to the URL (the view
 * is the URL: ./journalView.ts); the text applies on Enter or after a pause in typing.
 */
import { useEffect, useState } from "react";
import { grepProblem, JOURNAL_PRIORITY_NAMES } from "@/server/contract/journalGrep";
import { JOURNAL_RANGES, type JournalRange, type JournalView } from "./journalView";

const RANGE_LABEL: Record<JournalRange, string> = { "15m": "last 15 min", "1h": "last hour", "6h": "last 6 h", "24h": "last 24 h", "7d": "last 7 days" };

const field = "rounded border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-900";

/** "2026-12-03T08:12" in the browser's zone, for datetime-local */
function localInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export function JournalFilterBar({ view, onChange }: { view: JournalView; onChange: (v: JournalView) => void }) {
  // the parent keys this bar by the view's text: a new text in the URL starts it afresh
  const [text, setText] = useState(view.grep ?? "");
  const problem = text ? grepProblem(text) : null;
  useEffect(() => {
    if (problem || text === (view.grep ?? "")) return;
    const t = setTimeout(() => onChange({ ...view, grep: text || undefined }), 600);
    return () => clearTimeout(t);
  }, [text, problem, view, onChange]);

  const rangeValue = view.last ?? (view.since !== undefined || view.until !== undefined ? "custom" : "");
  return (
    <form
      role="search"
      aria-label="Journal filters"
      className="flex flex-wrap items-end gap-2 border-b border-zinc-200 px-4 py-2 text-sm dark:border-zinc-800"
      onSubmit={(e) => {
        e.preventDefault();
        if (!problem) onChange({ ...view, grep: text || undefined });
      }}
    >
      <label className="flex flex-col gap-0.5">
        <span className="text-xs text-zinc-500 dark:text-zinc-400">Time</span>
        <select
          className={field}
          value={rangeValue}
          data-testid="journal-range"
          onChange={(e) => {
            const r = e.target.value;
            const { since: _s, until: _u, last: _l, ...rest } = view;
            if (r === "") onChange(rest);
            else if (r === "custom") onChange({ ...rest, since: Date.now() - 3600_000, until: Date.now() });
            else onChange({ ...rest, last: r as JournalRange });
          }}
        >
          <option value="">latest lines</option>
          {(Object.keys(JOURNAL_RANGES) as JournalRange[]).map((r) => (
            <option key={r} value={r}>
              {RANGE_LABEL[r]}
            </option>
          ))}
          <option value="custom">from … to …</option>
        </select>
      </label>
      {rangeValue === "custom" && (
        <>
          <label className="flex flex-col gap-0.5">
            <span className="text-xs text-zinc-500 dark:text-zinc-400">From</span>
            <input
              type="datetime-local"
              className={field}
              value={localInput(view.since)}
              onChange={(e) => e.target.value && onChange({ ...view, since: new Date(e.target.value).getTime() })}
            />
          </label>
          <label className="flex flex-col gap-0.5">
            <span className="text-xs text-zinc-500 dark:text-zinc-400">To</span>
            <input
              type="datetime-local"
              className={field}
              value={localInput(view.until)}
              onChange={(e) => onChange({ ...view, until: e.target.value ? new Date(e.target.value).getTime() + 59_999 : undefined })}
            />
          </label>
        </>
      )}
      <label className="flex flex-col gap-0.5">
        <span className="text-xs text-zinc-500 dark:text-zinc-400">Priority</span>
        <select
          className={field}
          value={view.priority ?? ""}
          data-testid="journal-priority"
          onChange={(e) => onChange({ ...view, priority: (e.target.value || undefined) as JournalView["priority"] })}
        >
          <option value="">any</option>
          {JOURNAL_PRIORITY_NAMES.slice(0, 7).map((p) => (
            <option key={p} value={p}>
              {p} or worse
            </option>
          ))}
        </select>
      </label>
      <label className="flex min-w-40 flex-1 flex-col gap-0.5">
        <span className="text-xs text-zinc-500 dark:text-zinc-400">Text (or simple regex, any case)</span>
        <input
          type="search"
          className={field}
          value={text}
          maxLength={200}
          placeholder="e.g. out of memory"
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? "journal-grep-problem" : undefined}
          data-testid="journal-grep"
          onChange={(e) => setText(e.target.value)}
        />
        {problem && (
          <span id="journal-grep-problem" className="text-xs text-red-700 dark:text-red-400">
            {problem}
          </span>
        )}
      </label>
      <label className="flex flex-col gap-0.5">
        <span className="text-xs text-zinc-500 dark:text-zinc-400">Boot</span>
        <select
          className={field}
          value={view.boot === undefined ? "" : String(view.boot)}
          onChange={(e) => onChange({ ...view, boot: e.target.value === "" ? undefined : Number(e.target.value) })}
        >
          <option value="">all boots</option>
          <option value="0">this boot</option>
          <option value="-1">previous boot</option>
          <option value="-2">two boots ago</option>
        </select>
      </label>
      {view.kernelPci && (
        <button
          type="button"
          className="rounded border border-zinc-300 px-2 py-1 text-xs dark:border-zinc-700"
          onClick={() => onChange({ ...view, kernelPci: undefined })}
        >
          with kernel lines of GPU {view.kernelPci.join(", ")} ×
        </button>
      )}
    </form>
  );
}
