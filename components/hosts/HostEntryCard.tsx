"use client";
/**
 * One host on the Hosts page: its connection (live), where it is configured and, for admins, its
 * agent's URL and the last characters of its token. Hosts added on this page can be edited and
 * removed by admins; those from the panel's environment say where to change them.
 */
import Link from "next/link";
import { useState } from "react";
import { OkNote, secondaryButton } from "@/components/auth/users/notes";
import { HostStateBadge } from "@/components/fleet/HostStateBadge";
import { hostSourceText, hostStateText } from "@/components/fleet/hostText";
import { hostHref } from "@/components/fleet/links";
import type { HostSummary } from "@/server/contract/fleet";
import { HostEditPanel } from "./HostEditPanel";
import { HostRemovePanel } from "./HostRemovePanel";
import type { HostEntry } from "./hostsData";

export function HostEntryCard({
  host,
  live,
  admin,
  manages,
  nowMs,
  onChanged,
  onRemoved,
}: {
  host: HostEntry;
  /** the fleet stream's newer summary, when it has one */
  live: HostSummary | undefined;
  /** sees the URL and token hint */
  admin: boolean;
  /** may edit and remove hosts added on this page */
  manages: boolean;
  nowMs: number;
  onChanged: () => void;
  onRemoved: (name: string) => void;
}) {
  const [panel, setPanel] = useState<"edit" | "remove" | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const s = live ?? host;
  const toggle = (p: "edit" | "remove") => {
    setDone(null);
    setPanel(panel === p ? null : p);
  };
  return (
    <li
      data-testid="host-entry"
      data-host={host.name}
      data-state={s.state}
      className="min-w-0 space-y-2 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800"
    >
      <div className="flex flex-wrap items-center gap-2">
        <h2 className="min-w-0 break-all font-mono text-base font-semibold">
          <Link href={hostHref(host.name)} className="underline-offset-2 hover:underline">
            {host.name}
          </Link>
        </h2>
        <HostStateBadge state={s.state} />
        {host.insecureHttp && (
          <span
            className="rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900 dark:bg-amber-900/40 dark:text-amber-100"
            title="Plain HTTP to an agent on another machine (insecure_http): its token and actions cross the network readable. Use https."
            data-testid="host-insecure-http"
          >
            insecure HTTP
          </span>
        )}
        <span className="tabular-nums text-zinc-600 dark:text-zinc-400" data-testid="host-since">
          {hostStateText(s, nowMs)}
        </span>
      </div>
      {s.error && (
        <p className="break-words text-red-800 dark:text-red-300" data-testid="host-error">
          {s.error}
        </p>
      )}
      <dl className="grid grid-cols-1 gap-x-4 gap-y-1 sm:grid-cols-[8rem_1fr]">
        <dt className="text-zinc-500 dark:text-zinc-400">Configured</dt>
        <dd data-testid="host-source">{hostSourceText(host.source)}</dd>
        {admin && (
          <>
            <dt className="text-zinc-500 dark:text-zinc-400">Agent URL</dt>
            <dd className="break-all font-mono text-xs">{host.url ?? "—"}</dd>
            <dt className="text-zinc-500 dark:text-zinc-400">Token</dt>
            <dd data-testid="host-token">
              {host.tokenSet ? `set${host.tokenHint && host.tokenHint !== "…" ? `, ends in ${host.tokenHint}` : ""}` : "not set"}
            </dd>
          </>
        )}
      </dl>
      {manages && host.editable && (
        <div className="flex flex-wrap gap-2">
          <button type="button" className={secondaryButton} aria-expanded={panel === "edit"} onClick={() => toggle("edit")}>
            Edit
          </button>
          <button type="button" className={secondaryButton} aria-expanded={panel === "remove"} onClick={() => toggle("remove")}>
            Remove
          </button>
        </div>
      )}
      {panel === "edit" && (
        <HostEditPanel
          host={host}
          onCancel={() => setPanel(null)}
          onDone={(message) => {
            setPanel(null);
            setDone(message);
            onChanged();
          }}
        />
      )}
      {panel === "remove" && <HostRemovePanel host={host} onCancel={() => setPanel(null)} onDone={onRemoved} />}
      {done && <OkNote>{done}</OkNote>}
    </li>
  );
}
