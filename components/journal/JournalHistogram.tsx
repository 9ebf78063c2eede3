"use client";
/** Lines per minute over the filtered range, errors (priority err or worse) in red on top. */
import type { JournalHistogram as Histogram } from "@/server/contract/journalSearch";
import { formatTime } from "@/server/contract/format";

export function JournalHistogram({ data }: { data: Histogram }) {
  const n = data.lines.length;
  const max = Math.max(1, ...data.lines);
  const total = data.lines.reduce((a, b) => a + b, 0);
  const errors = data.errors.reduce((a, b) => a + b, 0);
  const endMs = data.fromMs + n * data.bucketMs;
  const per = data.bucketMs === 60_000 ? "minute" : `${data.bucketMs / 60_000} minutes`;
  const label = `${total} lines, ${errors} errors, per ${per}, from ${formatTime(data.fromMs)} to ${formatTime(endMs)}${data.partial ? " (counted the first lines only)" : ""}`;
  return (
    <figure className="border-b border-zinc-200 px-4 py-2 dark:border-zinc-800" data-testid="journal-histogram">
      <svg viewBox={`0 0 ${n} 100`} preserveAspectRatio="none" className="block h-12 w-full" role="img" aria-label={label}>
        {data.lines.map((c, i) =>
          c === 0 ? null : (
            <g key={i}>
              <rect x={i + 0.1} width={0.8} y={100 - (c / max) * 100} height={(c / max) * 100} className="fill-zinc-400 dark:fill-zinc-500" />
              {data.errors[i]! > 0 && (
                <rect
                  x={i + 0.1}
                  width={0.8}
                  y={100 - (data.errors[i]! / max) * 100}
                  height={(data.errors[i]! / max) * 100}
                  className="fill-red-600 dark:fill-red-400"
                />
              )}
            </g>
          ),
        )}
      </svg>
      <figcaption className="flex justify-between text-xs text-zinc-500 dark:text-zinc-400">
        <span>{formatTime(data.fromMs)}</span>
        <span>
          {total} lines · <span className="text-red-700 dark:text-red-400">{errors} errors</span>
          {data.partial ? " · partial" : ""}
        </span>
        <span>{formatTime(endMs)}</span>
      </figcaption>
    </figure>
  );
}
