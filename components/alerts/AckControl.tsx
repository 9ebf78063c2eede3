"use client";
/**
 * An open alert's "I'm on it": who acknowledged it, when and their note; or, for operators and
 * admins, an Acknowledge button that asks for an optional note (the panel checks that the
 * operator may restart the unit, and says so when not).
 */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, secondaryButton } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import type { AlertView } from "@/server/contract/alerts";
import { formatDurationWords } from "@/server/contract/format";

export function AckControl({ a, nowMs, canAck }: { a: AlertView; nowMs: number; canAck: boolean }) {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const [note, setNote] = useState("");
  const ack = useMutation(
    trpc.alerts.ack.mutationOptions({
      onSuccess: () => {
        setOpen(false);
        void qc.invalidateQueries({ queryKey: trpc.alerts.list.queryKey() });
      },
    }),
  );
  if (a.acknowledgedBy) {
    return (
      <p className="text-sm" data-testid="acknowledged">
        <span className="font-medium">Acknowledged</span> by {a.acknowledgedBy}
        {a.acknowledgedAt ? ` ${formatDurationWords(nowMs - a.acknowledgedAt)} ago` : ""}
        {a.ackNote ? `: ${a.ackNote}` : ""}
      </p>
    );
  }
  if (!canAck || a.resolvedAtMs !== null) return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    ack.mutate({ id: a.id, note: note.trim() || undefined });
  };
  return (
    <div className="space-y-2">
      {open ? (
        <form onSubmit={submit} aria-label={`Acknowledge alert ${a.id}`} className="flex flex-wrap items-end gap-2">
          <div className="min-w-0 flex-1">
            <Field label="Note (optional)" hint="What you are doing about it; the channels are told">
              {(f) => <input {...f} className={inputClass} name="note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} />}
            </Field>
          </div>
          <button type="submit" className={buttonClass} disabled={ack.isPending}>
            {ack.isPending ? "Acknowledging…" : "I'm on it"}
          </button>
          <button type="button" className={secondaryButton} onClick={() => setOpen(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <button type="button" className={secondaryButton} onClick={() => setOpen(true)}>
          Acknowledge
        </button>
      )}
      {ack.error && <ErrorNote>{ack.error.message}</ErrorNote>}
    </div>
  );
}
