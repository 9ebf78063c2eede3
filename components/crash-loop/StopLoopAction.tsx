"use client";
/**
 * "Stop the loop" on the unit page, while the unit restarts in a loop (or when the diagnosis
 * leads here): a dialog with the evidence (`units.crashLoop`), then `units.stopLoop` (stop, then
 * reset-failed once stopped), and a line saying what was sent.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useImperativeHandle, useState, type Ref } from "react";
// loaded when first opened
import { LazyConfirmDialog as ConfirmDialog } from "@/components/LazyConfirmDialog";
import { useTRPC } from "@/components/trpc";
import type { ActionPermission } from "@/components/unit/unitActions";
import type { UnitSummary } from "@/server/contract/types";

// shown in the dialog: loaded with it, when it first opens
const CrashLoopEvidence = lazy(() => import("./CrashLoopEvidence").then((m) => ({ default: m.CrashLoopEvidence })));

export type StopLoopHandle = { request: () => void };

export function StopLoopAction({
  ref,
  host,
  name,
  unit,
  permission,
  initiallyOpen = false,
}: {
  ref?: Ref<StopLoopHandle>;
  host: string;
  name: string;
  unit: UnitSummary;
  /** the unit's stop permission; undefined until `units.get` answers */
  permission: ActionPermission | undefined;
  /** opened as it mounts (asked for before its code was here: LazyStopLoopAction) */
  initiallyOpen?: boolean;
}) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(initiallyOpen);
  const evidence = useQuery(trpc.units.crashLoop.queryOptions({ host, name }, { enabled: open, staleTime: 0, retry: false }));
  const stop = useMutation(trpc.units.stopLoop.mutationOptions());
  useImperativeHandle(ref, () => ({ request: () => setOpen(true) }));
  const allowed = permission?.allowed === true;
  return (
    <>
      {allowed && unit.crashLoop && (
        <button
          type="button"
          onClick={() => setOpen(true)}
          className="min-h-11 rounded-md border border-red-300 bg-white px-4 py-2 text-sm font-semibold text-red-800 shadow-sm hover:bg-red-50 dark:border-red-800 dark:bg-zinc-900 dark:text-red-300"
        >
          Stop the loop
        </button>
      )}
      {stop.data && (
        <p role="status" className="basis-full text-sm" data-testid="stop-loop-status">
          Stopping the loop: {stop.data.jobId === null ? "it was stopped already" : `stop job #${stop.data.jobId} queued`}; its failed state is reset once it
          has stopped.
        </p>
      )}
      {stop.error && (
        <p role="alert" className="basis-full text-sm text-red-800 dark:text-red-300">
          Stop the loop refused: {stop.error.message}
        </p>
      )}
      <ConfirmDialog
        open={open}
        title={`Stop the loop of ${name}?`}
        confirmLabel={`Stop the loop of ${name}`}
        danger
        onCancel={() => setOpen(false)}
        onConfirm={(reason) => {
          setOpen(false);
          if (!allowed) return;
          stop.mutate({ host, name, reason: reason || undefined });
        }}
      >
        {!allowed && permission && <p className="font-semibold">Not allowed: {permission.allowed ? "" : permission.reason}</p>}
        {evidence.data ? (
          // its own boundary: the open dialog stays while the evidence's code arrives
          <Suspense fallback={<p>Reading the evidence…</p>}>
            <CrashLoopEvidence report={evidence.data} />
          </Suspense>
        ) : evidence.error ? (
          <p>Evidence unavailable: {evidence.error.message}</p>
        ) : (
          <p>Reading the evidence…</p>
        )}
      </ConfirmDialog>
    </>
  );
}
