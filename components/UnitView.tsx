"use client";
/**
 * The unit page: heading and actions, the diagnosis, the state and GPU memory history, the
 * engine (serving or not, its probe and metrics), the facts and the journal, for one unit of one host. Live state comes from the event stream; systemd's
 * detail (PIDs, commands, permissions) from `units.get`, refetched on every state change. While
 * the host is not connected the page says so and shows the unit's last known state.
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { lazy, useEffect, useRef } from "react";
import { LazyStopLoopAction } from "@/components/crash-loop/LazyStopLoopAction";
import type { StopLoopHandle } from "@/components/crash-loop/StopLoopAction";
import { DiagnosisCard } from "@/components/DiagnosisCard";
import { HostNotLive } from "@/components/fleet/HostNotLive";
import { hostHref } from "@/components/fleet/links";
import { useLive } from "@/components/live/LiveProvider";
import { gpuWaitPreview } from "@/components/operations/gpuWaitPreview";
import { useLatestUnitOperation } from "@/components/operations/useOperation";
import { useTRPC } from "@/components/trpc";
import { UnitActions, type UnitActionsHandle } from "@/components/unit/UnitActions";
import { UnitFileSection } from "@/components/unit/UnitFileSection";
import { UnitHeading } from "@/components/unit/UnitHeading";
import { MaintenanceBanner } from "@/components/unit/MaintenanceBanner";
import { gpuList, unitGpuUse } from "@/components/unitGpu";
import { UnitHistory } from "@/components/UnitHistory";
import { hasJournalView } from "@/components/journal/journalKeys";
import { WhenVisible } from "@/components/WhenVisible";
import { formatMiB } from "@/server/contract/format";
import type { UnitSummary } from "@/server/contract/types";

// below the history: downloaded when scrolled to (the page's JavaScript budget, bench/route-js.ts)
const EnginePanel = lazy(() => import("@/components/readiness/EnginePanel").then((m) => ({ default: m.EnginePanel })));
const UnitFacts = lazy(() => import("@/components/unit/UnitFacts").then((m) => ({ default: m.UnitFacts })));
const JournalTail = lazy(() => import("@/components/JournalTail").then((m) => ({ default: m.JournalTail })));

export function UnitView({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const live = useLive();
  const hostLive = live.host(host);
  // a link to a journal view (shared, or the timeline's "journal here") opens the page at the journal
  const journalAsked = hasJournalView(new URLSearchParams(useSearchParams().toString()));
  const summary = hostLive?.units.get(name);
  // every 10 s as well: the engine's scraped metrics (requests, KV cache, tokens/s) change without any state change
  const detailQuery = useQuery(trpc.units.get.queryOptions({ host, name }, { retry: false, refetchInterval: 10_000 }));
  const { refetch } = detailQuery;
  const hostState = hostLive?.summary?.state;
  // systemd's detail (PIDs, control process) changes with every state change, and the host's
  // agent may answer again after it was away: refetch then.
  useEffect(() => {
    void refetch();
  }, [summary?.activeState, summary?.subState, summary?.mainPid, summary?.controlPid, summary?.job?.id, hostState, refetch]);
  const actions = useRef<UnitActionsHandle>(null);
  const stopLoop = useRef<StopLoopHandle>(null);
  const ongoing = useLatestUnitOperation(host, name);

  const detail = detailQuery.data?.detail;
  const unit: UnitSummary | undefined = summary ?? detail;
  const gpu = unitGpuUse(hostLive?.gpu ?? null, name);
  const gpuWait = gpuWaitPreview(hostLive?.gpu ?? null, name);

  if (!unit && (detailQuery.error || live.problem)) {
    return (
      <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200">
        <p className="font-semibold">
          Cannot show {name} on {host}
        </p>
        <p className="text-sm">{live.problem ?? detailQuery.error?.message}</p>
        <Link href={hostHref(host)} className="mt-2 inline-block text-sm underline">
          All units of {host}
        </Link>{" "}
        ·{" "}
        <Link href="/" className="mt-2 inline-block text-sm underline">
          All hosts
        </Link>
      </div>
    );
  }
  if (!unit) return <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading {name}…</p>;

  return (
    <div className="space-y-5">
      <header className="space-y-3">
        <UnitHeading host={host} name={name} unit={unit} />
        <HostNotLive host={host} />
        <MaintenanceBanner host={host} name={name} />
        <UnitActions
          ref={actions}
          host={host}
          name={name}
          unit={unit}
          // no buttons while the host's agent is away: it could not act on them
          permissions={hostLive?.isLive ? detailQuery.data?.permissions : undefined}
          permissionsPending={hostLive?.isLive === true && detailQuery.isPending}
          recent={detailQuery.data?.recentAction ?? null}
          activeEnterUsec={detail?.timestamps.activeEnterUsec}
          gpu={gpu}
          gpuWait={gpuWait}
          ongoing={ongoing}
        />
        <LazyStopLoopAction ref={stopLoop} host={host} name={name} unit={unit} permission={hostLive?.isLive ? detailQuery.data?.permissions.stop : undefined} />
      </header>

      <DiagnosisCard
        host={host}
        name={name}
        operation={ongoing}
        onAction={(a) => (a === "stop-loop" ? stopLoop.current?.request() : actions.current?.request(a))}
      />

      <UnitHistory host={host} name={name} current={unit} />

      <WhenVisible name="engine" minHeight={120} label="Engine">
        <EnginePanel readiness={unit.readiness} metrics={detail?.engine} />
      </WhenVisible>

      {detail && (
        <WhenVisible name="facts" minHeight={200} label="Facts">
          <UnitFacts detail={detail} gpuText={gpu.indexes.length ? `GPU ${gpuList(gpu.indexes)} · ${formatMiB(gpu.usedMiB)}` : "none"} />
        </WhenVisible>
      )}

      <UnitFileSection host={host} name={name} />

      <WhenVisible name="journal" minHeight={240} label="Journal" eager={journalAsked}>
        <JournalTail host={host} name={name} />
      </WhenVisible>
    </div>
  );
}
