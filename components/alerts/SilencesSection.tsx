"use client";
/**
 * Silences: who muted what, why and until when; admins and operators add one (operators: one unit
 * of one host they may restart) and end one early. A silence stops messages, not alerts.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, secondaryButton } from "@/components/auth/users/notes";
import { useNow } from "@/components/live/LiveProvider";
import { useTRPC } from "@/components/trpc";
import { formatDurationWords } from "@/server/contract/format";

const EMPTY = { host: "", unit: "", minutes: "60", reason: "" };

export function SilencesSection({ canSilence }: { canSilence: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const nowMs = useNow(10_000);
  const silences = useQuery(trpc.alerts.silences.list.queryOptions(undefined, { refetchInterval: 15_000 }));
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.alerts.silences.list.queryKey() });
  const [draft, setDraft] = useState(EMPTY);
  const add = useMutation(trpc.alerts.silences.add.mutationOptions({ onSuccess: () => (setDraft(EMPTY), void refresh()) }));
  const end = useMutation(trpc.alerts.silences.remove.mutationOptions({ onSuccess: () => void refresh() }));
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate({ host: draft.host.trim(), unit: draft.unit.trim() || undefined, minutes: Number(draft.minutes), reason: draft.reason.trim() });
  };
  const active = silences.data?.filter((s) => s.active) ?? [];
  return (
    <section aria-labelledby="silences-heading" className="space-y-3">
      <h2 id="silences-heading" className="text-base font-semibold">
        Silences
      </h2>
      {active.length === 0 ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Nothing is silenced.</p>
      ) : (
        <ul className="space-y-2" data-testid="silences">
          {active.map((s) => (
            <li key={s.id} className="flex flex-wrap items-center gap-x-3 gap-y-1 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800">
              <span className="font-mono text-xs break-all">
                {s.host}
                {s.unit ? `: ${s.unit}` : " (whole host)"}
                {s.rule ? ` · ${s.rule}` : ""}
              </span>
              <span>
                by {s.createdBy}: {s.reason}
              </span>
              <span className="text-xs text-zinc-500 dark:text-zinc-400">ends in {formatDurationWords(s.endsAtMs - nowMs)}</span>
              {canSilence && (
                <button type="button" className={`${secondaryButton} ml-auto`} disabled={end.isPending} onClick={() => end.mutate({ id: s.id })}>
                  End now
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {end.error && <ErrorNote>{end.error.message}</ErrorNote>}
      {canSilence && (
        <form
          onSubmit={submit}
          aria-label="Silence"
          className="grid grid-cols-1 gap-3 rounded-lg border border-zinc-200 p-3 sm:grid-cols-4 dark:border-zinc-800"
        >
          <Field label="Host" hint="A name or glob: gpu-a, gpu-*, *">
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="host"
                required
                spellCheck={false}
                value={draft.host}
                onChange={(e) => setDraft({ ...draft, host: e.target.value })}
              />
            )}
          </Field>
          <Field label="Unit" hint="Empty: the whole host">
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="unit"
                spellCheck={false}
                value={draft.unit}
                onChange={(e) => setDraft({ ...draft, unit: e.target.value })}
              />
            )}
          </Field>
          <Field label="Minutes">
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="minutes"
                type="number"
                min={1}
                max={43200}
                required
                value={draft.minutes}
                onChange={(e) => setDraft({ ...draft, minutes: e.target.value })}
              />
            )}
          </Field>
          <Field label="Why">
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="reason"
                required
                maxLength={500}
                value={draft.reason}
                onChange={(e) => setDraft({ ...draft, reason: e.target.value })}
              />
            )}
          </Field>
          <div className="sm:col-span-4">
            <button type="submit" className={buttonClass} disabled={add.isPending}>
              {add.isPending ? "Silencing…" : "Silence"}
            </button>
          </div>
        </form>
      )}
      {add.error && <ErrorNote>{add.error.message}</ErrorNote>}
    </section>
  );
}
