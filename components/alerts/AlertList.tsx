"use client";
/**
 * Open alerts, or their history: the rule, the host and unit (linked to its page), what holds,
 * since when, and the agent's diagnosis as it was when the alert opened. Polled every 5 s: alerts
 * open and resolve server-side whether or not this page is open.
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import type { AlertView } from "@/server/contract/alerts";
import { AckControl } from "./AckControl";
import { alertTimes, RULE_LABELS } from "./alertTexts";

/** tints under muted text-zinc-600 (text-zinc-500 is 4.4:1 on red-50, short of AA) */
const SEVERITY = {
  critical: "border-red-300 bg-red-50 dark:border-red-900 dark:bg-red-950/40",
  warning: "border-amber-300 bg-amber-50 dark:border-amber-900 dark:bg-amber-950/40",
  info: "border-zinc-200 bg-zinc-50 dark:border-zinc-800 dark:bg-zinc-900",
} as const;

function AlertItem({ a, nowMs, canAck }: { a: AlertView; nowMs: number; canAck: boolean }) {
  const href = a.unit ? `/hosts/${encodeURIComponent(a.host)}/units/${encodeURIComponent(a.unit)}` : `/hosts/${encodeURIComponent(a.host)}`;
  const tone = a.resolvedAtMs === null ? SEVERITY[a.severity] : SEVERITY.info;
  return (
    <li className={`space-y-1 rounded-lg border p-3 text-sm ${tone}`} data-testid="alert" data-rule={a.rule} data-unit={a.unit ?? ""}>
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <span className="font-semibold">{RULE_LABELS[a.rule] ?? a.rule}</span>
        <Link href={href} className="font-mono text-xs break-all text-blue-700 hover:underline dark:text-blue-400">
          {a.host}
          {a.unit ? `: ${a.unit}` : ""}
        </Link>
        <span className="text-xs text-zinc-600 dark:text-zinc-400">{alertTimes(a, nowMs)}</span>
        {a.silenced && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">silenced</span>}
        {a.inMaintenance && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">during maintenance</span>}
        {a.escalatedAt && !a.acknowledgedBy && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">escalated</span>}
      </div>
      <p>{a.summary}</p>
      {a.diagnosis ? (
        <p className="text-zinc-700 dark:text-zinc-300">
          <span className="font-medium">Why: </span>
          {a.diagnosis.headline}
          {a.diagnosis.nextStep && <span className="block text-xs text-zinc-600 dark:text-zinc-400">Next step: {a.diagnosis.nextStep}</span>}
        </p>
      ) : (
        a.diagnosisUnavailable && <p className="text-xs text-zinc-600 dark:text-zinc-400">No diagnosis: {a.diagnosisUnavailable}.</p>
      )}
      <AckControl a={a} nowMs={nowMs} canAck={canAck} />
    </li>
  );
}

export function AlertList({ state, title, empty, canAck = false }: { state: "open" | "resolved"; title: string; empty: string; canAck?: boolean }) {
  const trpc = useTRPC();
  const nowMs = useNow(5000);
  const alerts = useQuery(trpc.alerts.list.queryOptions({ state, limit: state === "open" ? 200 : 50 }, { refetchInterval: 5000 }));
  const id = `alerts-${state}`;
  return (
    <section aria-labelledby={id} className="space-y-3">
      <h2 id={id} className="text-base font-semibold">
        {title}
        {alerts.data && state === "open" ? ` (${alerts.data.alerts.length})` : ""}
      </h2>
      {alerts.error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          {alerts.error.message}
        </p>
      ) : !alerts.data ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>
      ) : alerts.data.alerts.length === 0 ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">{empty}</p>
      ) : (
        <ul className="space-y-2" data-testid={id}>
          {alerts.data.alerts.map((a) => (
            <AlertItem key={a.id} a={a} nowMs={nowMs} canAck={canAck} />
          ))}
        </ul>
      )}
    </section>
  );
}
