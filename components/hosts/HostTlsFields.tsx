"use client";
/**
 * How the panel trusts an agent, shared by the Add host form and a host's edit panel: a CA file
 * (read here, sent as PEM), the certificate's pinned SHA-256 fingerprint, and "insecure HTTP" for
 * plain http:// to another machine, ticked on purpose.
 */
import { inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";

export interface HostTlsDraft {
  caPem: string;
  fingerprint: string;
  insecureHttp: boolean;
}

export function HostTlsFields({
  draft,
  set,
  caHint = "PEM of the CA the agent's certificate chains to",
}: {
  draft: HostTlsDraft;
  set: (changes: Partial<HostTlsDraft>) => void;
  caHint?: string;
}) {
  return (
    <>
      <Field label="CA file (https, optional)" hint={caHint}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name="caFile"
            type="file"
            accept=".pem,.crt,.cer,application/x-pem-file"
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (!file) return set({ caPem: "" });
              void file.text().then((text) => set({ caPem: text }));
            }}
          />
        )}
      </Field>
      <Field label="Pinned fingerprint (https, optional)" hint="SHA-256 of the agent's certificate: openssl x509 -noout -fingerprint -sha256 -in agent.crt">
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name="fingerprint"
            autoComplete="off"
            spellCheck={false}
            maxLength={200}
            value={draft.fingerprint}
            onChange={(e) => set({ fingerprint: e.target.value })}
          />
        )}
      </Field>
      <label className="flex items-start gap-2 text-sm">
        <input type="checkbox" name="insecureHttp" checked={draft.insecureHttp} onChange={(e) => set({ insecureHttp: e.target.checked })} />
        <span>Insecure HTTP: plain http:// to an agent on another machine is meant (its token crosses the network readable)</span>
      </label>
    </>
  );
}
