"use client";
/**
 * Changing a host added on this page: its URL, a new token (left empty, the token stays; a URL on
 * another origin needs it again), its CA file or pinned fingerprint, and "insecure HTTP".
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, panelClass, secondaryButton } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import { HostTlsFields, type HostTlsDraft } from "./HostTlsFields";
import type { HostEntry } from "./hostsData";

export function HostEditPanel({ host, onDone, onCancel }: { host: HostEntry; onDone: (message: string) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const [url, setUrl] = useState(host.url ?? "");
  const [token, setToken] = useState("");
  const before: HostTlsDraft = { caPem: "", fingerprint: host.fingerprint ?? "", insecureHttp: host.insecureHttp };
  const [tls, setTls] = useState(before);
  const update = useMutation(trpc.hosts.update.mutationOptions({ onSuccess: (h) => onDone(`Saved ${h.name}. The panel reconnects to its agent.`) }));
  return (
    <form
      className={panelClass}
      aria-label={`Edit ${host.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        update.mutate({
          name: host.name,
          url: url.trim() !== host.url ? url.trim() : undefined,
          token: token.trim() || undefined,
          // only what was changed: a CA left unpicked stays, an emptied fingerprint is removed
          ...(tls.caPem ? { caPem: tls.caPem } : {}),
          ...(tls.fingerprint.trim() !== before.fingerprint ? { fingerprint: tls.fingerprint.trim() || null } : {}),
          ...(tls.insecureHttp !== before.insecureHttp ? { insecureHttp: tls.insecureHttp } : {}),
        });
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
        <HostTlsFields
          draft={tls}
          set={(changes) => setTls({ ...tls, ...changes })}
          caHint={host.caSet ? "A CA is set; pick a file to replace it." : "PEM of the CA the agent's certificate chains to"}
        />
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
