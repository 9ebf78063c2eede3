"use client";
/** Changing a host added on this page: its URL, and a new token (left empty, the token stays). */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, panelClass, secondaryButton } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import type { HostEntry } from "./hostsData";

export function HostEditPanel({ host, onDone, onCancel }: { host: HostEntry; onDone: (message: string) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const [url, setUrl] = useState(host.url ?? "");
  const [token, setToken] = useState("");
  const update = useMutation(trpc.hosts.update.mutationOptions({ onSuccess: (h) => onDone(`Saved ${h.name}. The panel reconnects to its agent.`) }));
  return (
    <form
      className={panelClass}
      aria-label={`Edit ${host.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        update.mutate({ name: host.name, url: url.trim() !== host.url ? url.trim() : undefined, token: token.trim() || undefined });
      }}
    >
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <Field label="Agent URL">
          {(f) => <input {...f} className={inputClass} name="url" type="url" required autoFocus value={url} onChange={(e) => setUrl(e.target.value)} />}
        </Field>
        <Field
          label="New agent token"
          hint={host.tokenHint ? `Leave empty to keep the current one (${host.tokenHint}).` : "Leave empty to keep the current one."}
        >
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="token"
              type="password"
              autoComplete="new-password"
              value={token}
              onChange={(e) => setToken(e.target.value)}
            />
          )}
        </Field>
      </div>
      {update.error && <ErrorNote>{update.error.message}</ErrorNote>}
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={secondaryButton} disabled={update.isPending}>
          {update.isPending ? "Saving…" : `Save ${host.name}`}
        </button>
        <button type="button" className={secondaryButton} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
