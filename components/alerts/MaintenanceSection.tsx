"use client";
/**
 * Planned maintenance windows: those holding now, the next ones, the past ones; admins add one
 * (once, from–to; or recurring: cron, minutes, time zone) and end one early. During a window its
 * units' alerts are recorded, not sent, and the status page says "Planned maintenance until …".
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, secondaryButton } from "@/components/auth/users/notes";
import { useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { formatDurationWords } from "@/server/contract/format";
import type { MaintenanceWindowView } from "@/server/contract/maintenance";

const EMPTY = { name: "", units: "", kind: "once" as "once" | "recurring", startsAt: "", endsAt: "", cron: "0 2 * * 0", minutes: "120", timeZone: "UTC" };
const PHASES = [
  { phase: "now", title: "Now" },
  { phase: "next", title: "Next" },
  { phase: "past", title: "Past" },
] as const;

const when = (ms: number) => new Date(ms).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });

function WindowItem({ w, nowMs, canEnd, onEnd, ending }: { w: MaintenanceWindowView; nowMs: number; canEnd: boolean; onEnd: () => void; ending: boolean }) {
  const span = w.current
    ? w.phase === "now"
      ? `until ${when(w.current.endsAtMs)} (${formatDurationWords(w.current.endsAtMs - nowMs)} left)`
      : `${when(w.current.startsAtMs)} – ${when(w.current.endsAtMs)}`
    : w.endedAtMs
      ? `ended ${when(w.endedAtMs)}${w.endedBy ? ` by ${w.endedBy}` : ""}`
      : w.endsAtMs
        ? `ended ${when(w.endsAtMs)}`
        : "";
  return (
    <li
      className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800"
      data-testid="maintenance-window"
    >
      <span className="font-medium">{w.name}</span>
      <span className="font-mono text-xs break-all">{w.units.join(", ")}</span>
      {w.cron && (
        <span className="text-xs text-zinc-500 dark:text-zinc-400">
          cron {w.cron} ({w.timeZone}), {w.durationMinutes} min
        </span>
      )}
      <span className="text-xs text-zinc-500 dark:text-zinc-400">{span}</span>
      {w.source === "config" && <span className="rounded bg-zinc-200 px-1.5 text-xs dark:bg-zinc-800">config file</span>}
      {canEnd && w.source === "panel" && w.phase !== "past" && (
        <button type="button" className={`${secondaryButton} ml-auto`} disabled={ending} onClick={onEnd}>
          End now
        </button>
      )}
    </li>
  );
}

export function MaintenanceSection({ canManage }: { canManage: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const nowMs = useNow(10_000);
  const list = useQuery(trpc.maintenance.list.queryOptions(undefined, { refetchInterval: 15_000 }));
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.maintenance.list.queryKey() });
  const [draft, setDraft] = useState(EMPTY);
  const create = useMutation(trpc.maintenance.create.mutationOptions({ onSuccess: () => (setDraft(EMPTY), void refresh()) }));
  const end = useMutation(trpc.maintenance.end.mutationOptions({ onSuccess: () => void refresh() }));
  const set = (k: keyof typeof EMPTY) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const common = { name: draft.name.trim(), units: draft.units.split(/[\s,]+/).filter(Boolean) };
    // datetime-local is the browser's local time: sent as an instant
    if (draft.kind === "once") create.mutate({ ...common, startsAt: new Date(draft.startsAt).toISOString(), endsAt: new Date(draft.endsAt).toISOString() });
    else create.mutate({ ...common, cron: draft.cron.trim(), durationMinutes: Number(draft.minutes), timeZone: draft.timeZone.trim() || "UTC" });
  };
  const windows = list.data ?? [];
  return (
    <section aria-labelledby="maintenance-heading" className="space-y-3">
      <h2 id="maintenance-heading" className="text-base font-semibold">
        Maintenance windows
      </h2>
      {list.error && <ErrorNote>{list.error.message}</ErrorNote>}
      {list.data && windows.length === 0 && <p className="text-sm text-zinc-500 dark:text-zinc-400">No maintenance is planned.</p>}
      {PHASES.map(({ phase, title }) => {
        const some = windows.filter((w) => w.phase === phase);
        if (some.length === 0) return null;
        return (
          <div key={phase} className="space-y-2">
            <h3 className="text-sm font-medium">{title}</h3>
            <ul className="space-y-2" data-testid={`maintenance-${phase}`}>
              {some.map((w) => (
                <WindowItem
                  key={String(w.id)}
                  w={w}
                  nowMs={nowMs}
                  canEnd={canManage}
                  ending={end.isPending}
                  onEnd={() => typeof w.id === "number" && end.mutate({ id: w.id })}
                />
              ))}
            </ul>
          </div>
        );
      })}
      {end.error && <ErrorNote>{end.error.message}</ErrorNote>}
      {canManage && (
        <form
          onSubmit={submit}
          aria-label="Plan maintenance"
          className="grid grid-cols-1 gap-3 rounded-lg border border-zinc-200 p-3 sm:grid-cols-4 dark:border-zinc-800"
        >
          <Field label="Name">
            {(f) => <input {...f} className={inputClass} name="name" required maxLength={120} value={draft.name} onChange={set("name")} />}
          </Field>
          <div className="sm:col-span-2">
            <Field label="Units" hint="host:unit patterns, e.g. gpu-a:vllm-* or gpu-b:* (the whole host)">
              {(f) => <input {...f} className={inputClass} name="units" required spellCheck={false} value={draft.units} onChange={set("units")} />}
            </Field>
          </div>
          <Field label="When">
            {(f) => (
              <select {...f} className={inputClass} name="kind" value={draft.kind} onChange={set("kind")}>
                <option value="once">once</option>
                <option value="recurring">recurring (cron)</option>
              </select>
            )}
          </Field>
          {draft.kind === "once" ? (
            <>
              <Field label="Starts">
                {(f) => (
                  <input {...f} className={inputClass} name="startsAt" type="datetime-local" required value={draft.startsAt} onChange={set("startsAt")} />
                )}
              </Field>
              <Field label="Ends">
                {(f) => <input {...f} className={inputClass} name="endsAt" type="datetime-local" required value={draft.endsAt} onChange={set("endsAt")} />}
              </Field>
            </>
          ) : (
            <>
              <Field label="Cron" hint="minute hour day month weekday">
                {(f) => <input {...f} className={inputClass} name="cron" required spellCheck={false} value={draft.cron} onChange={set("cron")} />}
              </Field>
              <Field label="Minutes">
                {(f) => (
                  <input
                    {...f}
                    className={inputClass}
                    name="durationMinutes"
                    type="number"
                    min={1}
                    max={10080}
                    required
                    value={draft.minutes}
                    onChange={set("minutes")}
                  />
                )}
              </Field>
              <Field label="Time zone" hint="e.g. UTC, Europe/Berlin">
                {(f) => <input {...f} className={inputClass} name="timeZone" spellCheck={false} value={draft.timeZone} onChange={set("timeZone")} />}
              </Field>
            </>
          )}
          <div className="sm:col-span-4">
            <button type="submit" className={buttonClass} disabled={create.isPending}>
              {create.isPending ? "Planning…" : "Plan maintenance"}
            </button>
          </div>
        </form>
      )}
      {create.error && <ErrorNote>{create.error.message}</ErrorNote>}
    </section>
  );
}
