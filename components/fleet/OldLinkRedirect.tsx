"use client";
/**
 * The single-host panel's links, `/units/<name>` and `/gpus`, in a fleet: straight on to the one
 * host they mean (router.replace, so Back skips this page), a choice when several hosts fit, and
 * a plain sentence when none does. Asked in the browser with the user's own session, like every
 * other call (see ./oldLinks.ts).
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState, type ReactNode } from "react";
import { stateLabel } from "@/components/StateBadge";
import { useTRPC } from "@/components/trpc";
import type { HostState } from "@/server/contract/fleet";
import { HostStateBadge } from "./HostStateBadge";
import { gpuTotalsText } from "./hostText";
import { gpusLinkTarget, unitLinkTarget, type LinkTarget } from "./oldLinks";
import { hostGpusHref, hostUnitHref } from "./links";

/** How long to wait for hosts the panel is still connecting to before deciding without them. */
const WAIT_FOR_CONNECTING_MS = 5_000;

export function UnitLinkRedirect({ name }: { name: string }) {
  const trpc = useTRPC();
  const [waiting, setWaiting] = useState(true);
  useEffect(() => {
    const t = setTimeout(() => setWaiting(false), WAIT_FOR_CONNECTING_MS);
    return () => clearTimeout(t);
  }, []);
  const list = useQuery(trpc.units.list.queryOptions(undefined, { refetchInterval: waiting ? 1_000 : false, staleTime: 0 }));
  const target = list.data ? unitLinkTarget(name, list.data.units, list.data.hosts, waiting) : null;
  const states = new Map(list.data?.hosts.map((h) => [h.name, h.state]));
  return (
    <Follow target={target} error={list.error?.message ?? null} title={<span className="font-mono">{name}</span>}>
      {target?.kind === "choose" && (
        <Choice
          intro={`${target.hosts.length} hosts have a unit named ${name}. Which one?`}
          items={target.hosts.map((h) => {
            const u = list.data?.units.find((x) => x.host === h && x.name === name);
            return { host: h, href: hostUnitHref(h, name), state: states.get(h), detail: u ? stateLabel(u.activeState, u.subState) : undefined };
          })}
        />
      )}
      {target?.kind === "none" && (
        <p role="alert" data-testid="old-link-none">
          No host has a unit named <b className="font-mono">{name}</b>.
          {target.unknown.length > 0 && ` The panel has not reached ${target.unknown.join(", ")} yet, so their units are not known.`}{" "}
          <Link href="/" className="underline">
            All hosts and units
          </Link>
        </p>
      )}
    </Follow>
  );
}

export function GpusLinkRedirect() {
  const trpc = useTRPC();
  const hosts = useQuery(trpc.hosts.list.queryOptions());
  const target = hosts.data ? gpusLinkTarget(hosts.data) : null;
  return (
    <Follow target={target} error={hosts.error?.message ?? null} title="GPUs">
      {target?.kind === "choose" && (
        <Choice
          intro="Which host's GPUs?"
          items={(hosts.data ?? []).map((h) => ({ host: h.name, href: hostGpusHref(h.name), state: h.state, detail: gpuTotalsText(h.gpuTotals) }))}
        />
      )}
      {target?.kind === "none" && (
        <p role="alert" data-testid="old-link-none">
          This panel has no hosts yet.{" "}
          <Link href="/hosts" className="underline">
            Hosts
          </Link>
        </p>
      )}
    </Follow>
  );
}

function Follow({ target, error, title, children }: { target: LinkTarget | null; error: string | null; title: ReactNode; children: ReactNode }) {
  const router = useRouter();
  const href = target?.kind === "go" ? target.href : null;
  useEffect(() => {
    if (href) router.replace(href);
  }, [href, router]);
  return (
    <div className="space-y-3">
      <h1 className="break-all text-xl font-semibold">{title}</h1>
      {error ? (
        <p role="alert" className="text-sm text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : !target || target.kind === "waiting" ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Looking for it on every host…</p>
      ) : href ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">
          Opening <Link href={href}>{href}</Link>…
        </p>
      ) : (
        children
      )}
    </div>
  );
}

type ChoiceItem = { host: string; href: string; state?: HostState; detail?: string };

function Choice({ intro, items }: { intro: string; items: ChoiceItem[] }) {
  return (
    <div className="space-y-2">
      <p>{intro}</p>
      <ul className="divide-y divide-zinc-200 rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800" data-testid="host-choice">
        {items.map((i) => (
          <li key={i.host}>
            <Link href={i.href} className="flex flex-wrap items-center gap-x-3 gap-y-1 px-4 py-3 font-mono hover:bg-zinc-50 dark:hover:bg-zinc-900">
              {i.host}
              {i.state && <HostStateBadge state={i.state} />}
              {i.detail && <span className="font-sans text-sm text-zinc-600 dark:text-zinc-400">{i.detail}</span>}
            </Link>
          </li>
        ))}
      </ul>
    </div>
  );
}
