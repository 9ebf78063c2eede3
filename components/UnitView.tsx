"use client";
/**
 * The unit page: heading and actions, the diagnosis, the state and GPU memory history, the facts
 * and the journal. Live state comes from the event stream; systemd's detail (PIDs, commands,
 * permissions) from `units.get`, refetched on every state change.
 */
import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef } from "react";
import { DiagnosisCard } from "@/components/DiagnosisCard";
import { JournalTail } from "@/components/JournalTail";
import { useLive } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { UnitActions, type UnitActionsHandle } from "@/components/unit/UnitActions";
import { UnitFacts } from "@/components/unit/UnitFacts";
import { UnitHeading } from "@/components/unit/UnitHeading";
import { gpuList, unitGpuUse } from "@/components/unitGpu";
import { UnitHistory } from "@/components/UnitHistory";
import { formatMiB } from "@/server/contract/format";
import type { UnitSummary } from "@/server/contract/types";

export function UnitView({ name }: { name: string }) {
  const trpc = useTRPC();
  const live = useLive();
  const summary = live.units.get(name);
  const detailQuery = useQuery(trpc.units.get.queryOptions({ name }, { retry: false }));
  const { refetch } = detailQuery;
  // systemd's detail (PIDs, control process) changes with every state change: refetch then.
  useEffect(() => {
    void refetch();
  }, [summary?.activeState, summary?.subState, summary?.mainPid, summary?.controlPid, summary?.job?.id, refetch]);
  const actions = useRef<UnitActionsHandle>(null);

  const detail = detailQuery.data?.detail;
  const unit: UnitSummary | undefined = summary ?? detail;
  const gpu = unitGpuUse(live.gpu, name);

  if (detailQuery.error && !unit) {
    return (
      <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200">
        <p className="font-semibold">Cannot show {name}</p>
        <p className="text-sm">{detailQuery.error.message}</p>
        <Link href="/" className="mt-2 inline-block text-sm underline">
          Back to all units
        </Link>
      </div>
    );
  }
  if (!unit) return <p className="text-sm text-zinc-500">Loading {name}…</p>;

  return (
    <div className="space-y-5">
      <header className="space-y-3">
        <UnitHeading name={name} unit={unit} />
        <UnitActions
          ref={actions}
          name={name}
          unit={unit}
          permissions={detailQuery.data?.permissions}
          recent={detailQuery.data?.recentAction ?? null}
          activeEnterUsec={detail?.timestamps.activeEnterUsec}
          gpu={gpu}
        />
      </header>

      <DiagnosisCard name={name} onAction={(a) => actions.current?.request(a)} />

      <UnitHistory name={name} current={unit} />

      {detail && <UnitFacts detail={detail} gpuText={gpu.indexes.length ? `GPU ${gpuList(gpu.indexes)} · ${formatMiB(gpu.usedMiB)}` : "none"} />}

      <JournalTail name={name} />
    </div>
  );
}
