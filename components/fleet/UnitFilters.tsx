"use client";
/** The unit list's filter controls: text, state and (on the fleet overview) host. */
import type { RefObject } from "react";
import { STATE_FILTER_LABEL, STATE_FILTERS, type UnitFilter } from "./unitFilter";

const control = "rounded-md border border-zinc-300 bg-white px-2 py-1.5 dark:border-zinc-700 dark:bg-zinc-900";

export function UnitFilters({
  filter,
  hosts,
  searchRef,
  onText,
  onParam,
}: {
  filter: UnitFilter;
  /** the hosts to choose from; none: no host filter (a host's own page) */
  hosts?: readonly string[];
  searchRef: RefObject<HTMLInputElement | null>;
  onText: (value: string) => void;
  onParam: (key: keyof UnitFilter, value: string) => void;
}) {
  return (
    <>
      <label className="flex min-w-0 items-center gap-2 text-sm sm:ml-auto">
        <span className="sr-only">Filter units by name</span>
        <input
          ref={searchRef}
          type="search"
          value={filter.q}
          placeholder="Filter by name…"
          onChange={(e) => onText(e.target.value)}
          className={`w-44 min-w-0 sm:w-48 ${control}`}
        />
      </label>
      {hosts && (
        <label className="flex items-center gap-2 text-sm">
          <span className="sr-only">Filter units by host</span>
          <select value={filter.host} onChange={(e) => onParam("host", e.target.value)} className={`max-w-40 ${control}`}>
            <option value="">All hosts</option>
            {/* a host in the URL that is not (yet) known stays selectable */}
            {[...new Set([...hosts, filter.host].filter(Boolean))].map((h) => (
              <option key={h} value={h}>
                {h}
              </option>
            ))}
          </select>
        </label>
      )}
      <label className="flex items-center gap-2 text-sm">
        <span className="sr-only">Filter units by state</span>
        <select value={filter.state} onChange={(e) => onParam("state", e.target.value)} className={`max-w-48 ${control}`}>
          {STATE_FILTERS.map((s) => (
            <option key={s} value={s}>
              {STATE_FILTER_LABEL[s]}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
