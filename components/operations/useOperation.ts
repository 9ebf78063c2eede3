"use client";
/**
 * One GPU-aware operation as it is now: the newest of what the call answered, what the live
 * stream reported, and `operations.get` (polled every 5 s while it runs, in case the stream
 * missed a step). And the unit's latest operation, so a page opened or reloaded mid-way shows it.
 */
import { useQuery } from "@tanstack/react-query";
import { useLive } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { isFinalOperationStep, type Operation } from "@/server/contract/operations";

function newest(...ops: (Operation | undefined | null)[]): Operation | null {
  let best: Operation | null = null;
  for (const op of ops) if (op && (!best || op.atMs > best.atMs || (op.atMs === best.atMs && op.steps.length > best.steps.length))) best = op;
  return best;
}

export function useOperation(host: string, initial: Operation): Operation {
  const trpc = useTRPC();
  const live = useLive().host(host)?.operations.get(initial.id);
  const running = !isFinalOperationStep((newest(initial, live) ?? initial).step);
  const polled = useQuery(trpc.operations.get.queryOptions({ host, id: initial.id }, { refetchInterval: running ? 5_000 : false, retry: false }));
  return newest(initial, live, polled.data) ?? initial;
}

/** The unit's newest operation (from `operations.list` and the live stream); null when it has none. */
export function useLatestUnitOperation(host: string, unit: string): Operation | null {
  const trpc = useTRPC();
  const hostLive = useLive().host(host);
  const listed = useQuery(trpc.operations.list.queryOptions({ host, unit }, { retry: false, enabled: hostLive?.isLive === true }));
  const all = [...(listed.data ?? []), ...[...(hostLive?.operations.values() ?? [])].filter((o) => o.unit === unit)];
  // the newest operation, and of its copies (the list's answer, the stream's events) the newest
  let latest: Operation | null = null;
  for (const op of all) if (!latest || op.createdAtMs > latest.createdAtMs || (op.id === latest.id && newest(latest, op) === op)) latest = op;
  return latest;
}
