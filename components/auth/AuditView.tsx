"use client";
/**
 * The audit log: who did what, to which unit, why, and how it ended. Filters live in the URL
 * (`/audit?unit=…` is where the timeline's action markers link), CSV export uses the same ones.
 */
import { useInfiniteQuery } from "@tanstack/react-query";
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { useState, type FormEvent } from "react";
import { hostUnitHref } from "@/components/fleet/links";
import { useTRPC } from "@/components/trpc";
import { replaceSearch } from "@/components/urlState";
import { inputClass } from "./shared";

const ACTIONS = [
  "start",
  "stop",
  "restart",
  "reset-failed",
  "kill",
  "login",
  "logout",
  "setup",
  "user.add",
  "user.update",
  "user.disable",
  "user.enable",
  "user.passwd",
  "audit.export",
  "audit.view",
  "host.add",
  "host.update",
  "host.remove",
];
const OUTCOMES = ["pending", "done", "failed", "refused", "error", "ok", "canceled", "timeout", "unknown"];
const TEXT_FILTERS = ["user", "unit"] as const;
const FILTER_KEYS = ["user", "unit", "action", "outcome", "from", "to"] as const;
type FilterKey = (typeof FILTER_KEYS)[number];

/** `datetime-local` value (local time) → epoch ms. */
function localToMs(value: string | null): number | undefined {
  if (!value) return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

function outcomeTone(outcome: string): string {
  if (outcome === "done" || outcome === "ok") return "bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200";
  if (outcome === "pending") return "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200";
  if (outcome === "refused") return "bg-zinc-200 text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100";
  return "bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200";
}

export function AuditView() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const pathname = usePathname();
  const value = (k: FilterKey) => params.get(k) ?? "";
  const [draft, setDraft] = useState({ user: value("user"), unit: value("unit") });
  const [draftKey, setDraftKey] = useState(params.toString());
  if (draftKey !== params.toString()) {
    // the URL changed (a link, back/forward): the text boxes follow it
    setDraftKey(params.toString());
    setDraft({ user: value("user"), unit: value("unit") });
  }

  const setFilters = (changes: Partial<Record<FilterKey, string>>) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v && v.trim()) next.set(k, v.trim());
      else next.delete(k);
    }
    replaceSearch(pathname, next);
  };

  const filters = {
    user: value("user") || undefined,
    unit: value("unit") || undefined,
    action: value("action") || undefined,
    outcome: value("outcome") || undefined,
    from: localToMs(params.get("from")),
    // "to 12:00" includes the whole minute
    to: ((ms) => (ms === undefined ? undefined : ms + 59_999))(localToMs(params.get("to"))),
  };
  const query = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions({ ...filters, limit: 100 }, { getNextPageParam: (page) => page.nextCursor, refetchInterval: 10_000, retry: false }),
  );
  const rows = query.data?.pages.flatMap((p) => p.rows) ?? [];

  const csv = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v !== undefined) csv.set(k, String(v));
  const csvHref = `/api/audit.csv${csv.size ? `?${csv}` : ""}`;

  const submitText = (e: FormEvent) => {
    e.preventDefault();
    setFilters(draft);
  };
  const anyFilter = FILTER_KEYS.some((k) => params.get(k));

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Audit log</h1>
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Every action and every refused one, newest first.</p>
        <a
          href={csvHref}
          className="ml-auto rounded-md border border-zinc-300 px-3 py-1.5 text-sm hover:bg-zinc-50 dark:border-zinc-700 dark:hover:bg-zinc-900"
          download
          data-testid="audit-csv"
        >
          Export CSV
        </a>
      </div>

      <form
        onSubmit={submitText}
        className="grid grid-cols-1 gap-3 rounded-lg border border-zinc-200 p-3 text-sm sm:grid-cols-3 lg:grid-cols-6 dark:border-zinc-800"
        aria-label="Audit filters"
      >
        {TEXT_FILTERS.map((k) => (
          <label key={k} className="block">
            <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">{k === "user" ? "User" : "Unit"}</span>
            <input
              className={inputClass}
              name={k}
              value={draft[k]}
              placeholder={k === "unit" ? "vllm-….service" : "name"}
              onChange={(e) => setDraft({ ...draft, [k]: e.target.value })}
              onBlur={() => draft[k] !== value(k) && setFilters({ [k]: draft[k] })}
            />
          </label>
        ))}
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">Action</span>
          <select className={inputClass} name="action" value={value("action")} onChange={(e) => setFilters({ action: e.target.value })}>
            <option value="">any</option>
            {[...new Set([...ACTIONS, value("action")].filter(Boolean))].map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">Outcome</span>
          <select className={inputClass} name="outcome" value={value("outcome")} onChange={(e) => setFilters({ outcome: e.target.value })}>
            <option value="">any</option>
            {[...new Set([...OUTCOMES, value("outcome")].filter(Boolean))].map((o) => (
              <option key={o}>{o}</option>
            ))}
          </select>
        </label>
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">From</span>
          <input className={inputClass} type="datetime-local" name="from" value={value("from")} onChange={(e) => setFilters({ from: e.target.value })} />
        </label>
        <label className="block">
          <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">To</span>
          <input className={inputClass} type="datetime-local" name="to" value={value("to")} onChange={(e) => setFilters({ to: e.target.value })} />
        </label>
        <button type="submit" className="sr-only">
          Apply filters
        </button>
      </form>
      {anyFilter && (
        <button type="button" className="text-sm text-blue-700 underline dark:text-blue-400" onClick={() => replaceSearch(pathname, new URLSearchParams())}>
          Clear filters
        </button>
      )}

      {query.error ? (
        <p
          role="alert"
          data-testid="audit-error"
          className="rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {query.error.message}
        </p>
      ) : query.isPending ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400" data-testid="audit-empty">
          No entries{anyFilter ? " match these filters" : " yet"}.
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-zinc-200 dark:border-zinc-800">
          <table className="w-full min-w-[56rem] text-left text-sm" data-testid="audit-table">
            <thead className="bg-zinc-50 text-xs text-zinc-600 dark:bg-zinc-900 dark:text-zinc-400">
              <tr>
                {["Time", "User", "Source", "Host", "Unit", "Action", "Reason", "Outcome", "Detail"].map((h) => (
                  <th key={h} scope="col" className="px-3 py-2 font-medium">
                    {h}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody className="divide-y divide-zinc-200 dark:divide-zinc-800">
              {rows.map((r) => (
                <tr
                  key={r.id}
                  data-testid="audit-row"
                  data-unit={r.unit ?? ""}
                  data-action={r.action}
                  data-user={r.user ?? ""}
                  data-host={r.host ?? ""}
                  data-outcome={r.outcome}
                  className="align-top"
                >
                  <td className="whitespace-nowrap px-3 py-2 tabular-nums" title={new Date(r.at).toISOString()}>
                    {new Date(r.at).toLocaleString()}
                  </td>
                  <td className="px-3 py-2">
                    {r.user ? (
                      <Link href={`/audit?user=${encodeURIComponent(r.user)}`} className="hover:underline">
                        {r.user}
                      </Link>
                    ) : (
                      <span className="text-zinc-500 dark:text-zinc-400">—</span>
                    )}
                    {r.role && <span className="block text-xs text-zinc-500 dark:text-zinc-400">{r.role}</span>}
                  </td>
                  <td className="px-3 py-2 font-mono text-xs">{r.sourceAddr ?? "—"}</td>
                  <td className="px-3 py-2 font-mono text-xs">{r.host ?? "—"}</td>
                  <td className="max-w-[16rem] break-all px-3 py-2 font-mono text-xs">
                    {r.unit ? (
                      <>
                        <Link href={`/audit?unit=${encodeURIComponent(r.unit)}`} className="hover:underline" title="Only this unit">
                          {r.unit}
                        </Link>{" "}
                        <Link
                          href={r.host ? hostUnitHref(r.host, r.unit) : `/units/${encodeURIComponent(r.unit)}`}
                          className="text-blue-700 dark:text-blue-400"
                          aria-label={`Open ${r.unit}${r.host ? ` on ${r.host}` : ""}`}
                        >
                          ↗
                        </Link>
                      </>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="px-3 py-2">{r.action}</td>
                  <td className="max-w-[16rem] break-words px-3 py-2">{r.reason ?? ""}</td>
                  <td className="px-3 py-2">
                    <span className={`rounded px-1.5 py-0.5 text-xs font-semibold ${outcomeTone(r.outcome)}`}>{r.outcome}</span>
                    {r.jobId !== null && <span className="block text-xs text-zinc-500 dark:text-zinc-400">job #{r.jobId}</span>}
                  </td>
                  <td className="max-w-[20rem] break-words px-3 py-2 text-xs text-zinc-600 dark:text-zinc-400">{r.detail ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {query.hasNextPage && (
        <button
          type="button"
          onClick={() => void query.fetchNextPage()}
          disabled={query.isFetchingNextPage}
          className="rounded-md border border-zinc-300 px-3 py-1.5 text-sm dark:border-zinc-700"
        >
          {query.isFetchingNextPage ? "Loading…" : "Older entries"}
        </button>
      )}
    </div>
  );
}
