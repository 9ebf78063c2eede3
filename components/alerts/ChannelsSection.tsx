"use client";
/**
 * Channels (admins): where alerts go, each with its last delivery, "Send test" (queued; the log
 * below shows how it went), enable/disable and remove for the ones added here (the environment's
 * are read-only); and the delivery log of every channel.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ErrorNote, OkNote, secondaryButton } from "@/components/auth/users/notes";
import { useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import type { ChannelView } from "@/server/contract/alerts";
import { AddChannelForm } from "./AddChannelForm";
import { deliveryWords } from "./alertTexts";

function ChannelRow({ c, onChanged }: { c: ChannelView; onChanged: () => void }) {
  const trpc = useTRPC();
  const test = useMutation(trpc.alerts.channels.test.mutationOptions({ onSuccess: onChanged }));
  const update = useMutation(trpc.alerts.channels.update.mutationOptions({ onSuccess: onChanged }));
  const remove = useMutation(trpc.alerts.channels.remove.mutationOptions({ onSuccess: onChanged }));
  const error = test.error ?? update.error ?? remove.error;
  return (
    <li className="space-y-2 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800" data-testid="channel">
      <div className="flex flex-wrap items-baseline gap-x-3 gap-y-1">
        <span className="font-semibold">{c.name}</span>
        <span className="text-xs text-zinc-500 dark:text-zinc-400">{c.type}</span>
        <span className="font-mono text-xs break-all text-zinc-600 dark:text-zinc-400">{c.urlHint}</span>
        {c.type === "email" && <span className="text-xs">to {c.to.join(", ")}</span>}
        {c.source === "env" && <span className="text-xs text-zinc-500 dark:text-zinc-400">from the environment (read-only)</span>}
        {!c.enabled && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">disabled</span>}
      </div>
      {c.escalationOnly && (
        <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="escalation-only">
          Escalations only: a rule names it in escalateTo, so it hears an alert once nobody acknowledged it in time (then who took it and when it ended).
        </p>
      )}
      {c.lastDelivery && (
        <p className="text-xs text-zinc-500 dark:text-zinc-400">
          Last delivery: {c.lastDelivery.ok ? "sent" : `failed (${c.lastDelivery.error ?? "unknown"})`}
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        <button type="button" className={secondaryButton} disabled={test.isPending || !c.enabled} onClick={() => test.mutate({ id: c.id })}>
          Send test
        </button>
        {c.source === "panel" && (
          <>
            <button type="button" className={secondaryButton} disabled={update.isPending} onClick={() => update.mutate({ id: c.id, enabled: !c.enabled })}>
              {c.enabled ? "Disable" : "Enable"}
            </button>
            <button type="button" className={secondaryButton} disabled={remove.isPending} onClick={() => remove.mutate({ id: c.id })}>
              Remove
            </button>
          </>
        )}
      </div>
      {test.data && <OkNote>Test message queued; see the delivery log.</OkNote>}
      {error && <ErrorNote>{error.message}</ErrorNote>}
    </li>
  );
}

export function ChannelsSection() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const nowMs = useNow(5000);
  const channels = useQuery(trpc.alerts.channels.list.queryOptions(undefined, { refetchInterval: 10_000 }));
  const deliveries = useQuery(trpc.alerts.deliveries.queryOptions({ limit: 30 }, { refetchInterval: 3000 }));
  const refresh = () => {
    void qc.invalidateQueries({ queryKey: trpc.alerts.channels.list.queryKey() });
    void qc.invalidateQueries({ queryKey: trpc.alerts.deliveries.queryKey() });
  };
  const names = new Map(channels.data?.map((c) => [c.id, c.name]) ?? []);
  return (
    <section aria-labelledby="channels-heading" className="space-y-3">
      <h2 id="channels-heading" className="text-base font-semibold">
        Channels
      </h2>
      {channels.error && <ErrorNote>{channels.error.message}</ErrorNote>}
      {channels.data && channels.data.length === 0 && <p className="text-sm text-zinc-500 dark:text-zinc-400">No channels yet: alerts show here only.</p>}
      <ul className="space-y-2">
        {channels.data?.map((c) => (
          <ChannelRow key={c.id} c={c} onChanged={refresh} />
        ))}
      </ul>
      <AddChannelForm onAdded={refresh} />
      <h3 className="pt-2 text-sm font-semibold">Delivery log</h3>
      {deliveries.data && deliveries.data.deliveries.length === 0 && <p className="text-sm text-zinc-500 dark:text-zinc-400">Nothing sent yet.</p>}
      <ul className="space-y-1 text-sm" data-testid="deliveries">
        {deliveries.data?.deliveries.map((d) => (
          <li key={d.id} className="flex flex-wrap gap-x-3 border-b border-zinc-100 py-1 dark:border-zinc-900">
            <span className="font-medium">{names.get(d.channelId) ?? d.channelId}</span>
            <span className="min-w-0 break-words">{d.title}</span>
            <span className={d.status === "failed" ? "text-red-700 dark:text-red-400" : "text-zinc-500 dark:text-zinc-400"}>{deliveryWords(d, nowMs)}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
