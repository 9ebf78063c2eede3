"use client";
/** The top of a host's pages: the way back, the host's name and connection, its agent and backends, and its pages. */
import Link from "next/link";
import { useLive, useNow } from "@/components/live/LiveProvider";
import { HostNotLive } from "./HostNotLive";
import { HostStateBadge } from "./HostStateBadge";
import { agentText, hostStateText } from "./hostText";
import { hostGpusHref, hostHref } from "./links";

const linkClass = "text-blue-700 underline-offset-2 hover:underline dark:text-blue-400";

export function HostHeader({ host, page }: { host: string; page: "units" | "gpus" }) {
  const live = useLive();
  const now = useNow();
  const h = live.host(host);
  const summary = h?.summary;
  const agent = summary ? agentText(summary) : null;
  const backends = [
    h?.systemd && h.systemd.state !== "ok" ? `systemd ${h.systemd.state}: ${h.systemd.message}` : null,
    h?.telemetry && h.telemetry.state !== "ok" ? `GPU telemetry ${h.telemetry.state}: ${h.telemetry.message}` : null,
  ].filter(Boolean);
  return (
    <header className="space-y-2">
      <nav className="text-sm" aria-label="Breadcrumb">
        <Link href="/" className={linkClass}>
          ← All hosts
        </Link>
      </nav>
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <h1 className="min-w-0 break-all font-mono text-xl font-semibold">{page === "gpus" ? `GPUs of ${host}` : host}</h1>
        {summary && <HostStateBadge state={summary.state} />}
        {summary && (
          <span className="text-sm tabular-nums text-zinc-600 dark:text-zinc-400" data-testid="host-since">
            {hostStateText(summary, now)}
          </span>
        )}
      </div>
      <p className="flex flex-wrap gap-x-3 gap-y-1 text-sm text-zinc-600 dark:text-zinc-400">
        {agent && <span>{agent}</span>}
        {page === "units" ? (
          <Link href={hostGpusHref(host)} className={linkClass}>
            GPUs of {host}
          </Link>
        ) : (
          <Link href={hostHref(host)} className={linkClass}>
            Units of {host}
          </Link>
        )}
      </p>
      {backends.map((b) => (
        <p key={b} className="text-sm font-medium text-red-700 dark:text-red-400" data-testid="host-backend-problem">
          ⚠ {b}
        </p>
      ))}
      {live.problem && (
        <p
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {live.problem}
        </p>
      )}
      <HostNotLive host={host} />
    </header>
  );
}
