"use client";
/**
 * Why a GPU-aware restart refused: live processes outside the unit hold memory on its GPUs.
 * Each with its PID, command line, its unit (or "outside any unit"), GPU and memory; admins get a
 * SIGKILL button (asks first; the agent kills only that PID with that start time).
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
// loaded when first opened
import { LazyConfirmDialog as ConfirmDialog } from "@/components/LazyConfirmDialog";
import { useTRPC } from "@/components/trpc";
import { formatCmdline, formatMiB } from "@/server/contract/format";
import type { ForeignHolder } from "@/server/contract/operations";

function holderGpu(h: ForeignHolder): string {
  return `GPU ${h.gpuIndex ?? h.gpuUuid}`;
}

function KillHolder({ host, unit, holder: h }: { host: string; unit: string; holder: ForeignHolder }) {
  const trpc = useTRPC();
  const [asking, setAsking] = useState(false);
  const kill = useMutation(trpc.gpus.killHolder.mutationOptions());
  if (h.startedAtMs === null) return <span className="text-xs">(its start time is unknown: it cannot be killed safely from here)</span>;
  const startedAtMs = h.startedAtMs;
  return (
    <>
      {kill.isSuccess ? (
        <span className="text-xs font-semibold" role="status">
          SIGKILL sent to PID {h.pid}.
        </span>
      ) : (
        <button
          type="button"
          disabled={kill.isPending}
          onClick={() => setAsking(true)}
          className="min-h-9 rounded-md border border-red-400 bg-white px-2 py-1 text-xs font-semibold text-red-800 disabled:opacity-50 dark:border-red-700 dark:bg-zinc-900 dark:text-red-300"
        >
          SIGKILL PID {h.pid}
        </button>
      )}
      {kill.error && (
        <span role="alert" className="text-xs">
          Refused: {kill.error.message}
        </span>
      )}
      <ConfirmDialog
        open={asking}
        title={`SIGKILL PID ${h.pid}?`}
        confirmLabel={`SIGKILL PID ${h.pid}`}
        danger
        onCancel={() => setAsking(false)}
        onConfirm={(reason) => {
          setAsking(false);
          kill.mutate({ host, unit, pid: h.pid, startedAtMs, reason: reason || undefined });
        }}
      >
        <p>
          <code className="break-all">{formatCmdline(h.cmdline, 300)}</code>
        </p>
        <p>
          {h.unit ? <>It runs in {h.unit}</> : <>It runs outside any unit</>} and holds{" "}
          {h.usedMiB == null ? "memory (amount not reported)" : formatMiB(h.usedMiB)} on {holderGpu(h)}.
        </p>
        <p className="font-semibold text-red-700 dark:text-red-400">SIGKILL gives the process no chance to clean up; whatever it was doing is lost.</p>
      </ConfirmDialog>
    </>
  );
}

export function ForeignHolders({ host, unit, holders, onRetry }: { host: string; unit: string; holders: readonly ForeignHolder[]; onRetry?: () => void }) {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const admin = me.data?.user?.role === "admin";
  return (
    <div className="space-y-1" data-testid="foreign-holders">
      <p className="font-semibold">Processes outside {unit} hold memory on its GPUs:</p>
      <ul className="space-y-2">
        {holders.map((h) => (
          <li
            key={`${h.pid}-${h.gpuUuid}`}
            className="flex flex-col gap-1 text-xs sm:flex-row sm:flex-wrap sm:items-center sm:gap-x-3"
            data-testid="foreign-holder"
          >
            <span className="font-mono font-semibold">PID {h.pid}</span>
            <code className="min-w-0 break-all">{formatCmdline(h.cmdline, 160) || h.processName}</code>
            <span>{h.unit ?? "outside any unit"}</span>
            <span>
              {holderGpu(h)} · {h.usedMiB == null ? "amount not reported" : formatMiB(h.usedMiB)}
            </span>
            {admin && <KillHolder host={host} unit={unit} holder={h} />}
          </li>
        ))}
      </ul>
      {!admin && <p className="text-xs">Only an admin may SIGKILL them from here; or stop them on the host.</p>}
      {onRetry && <p className="text-xs">Once they are gone, try again.</p>}
    </div>
  );
}
