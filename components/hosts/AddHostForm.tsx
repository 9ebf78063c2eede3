"use client";
/**
 * Adding an agent: its name in the panel, its URL and its bearer token (a password field; the
 * token never comes back); for https a CA file (read here, sent as PEM) and/or the certificate's
 * pinned fingerprint; for plain http to another machine, "insecure HTTP" ticked on purpose. What was typed stays when the server refuses, with its reason.
 */
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote, OkNote } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import { HostTlsFields } from "./HostTlsFields";
import { useRefreshHosts } from "./hostsData";

const EMPTY = { name: "", url: "", token: "", caPem: "", fingerprint: "", insecureHttp: false };

export function AddHostForm() {
  const trpc = useTRPC();
  const refresh = useRefreshHosts();
  const [draft, setDraft] = useState(EMPTY);
  const [added, setAdded] = useState<string | null>(null);
  const add = useMutation(
    trpc.hosts.add.mutationOptions({
      onSuccess: (host) => {
        setDraft(EMPTY);
        setAdded(`Added ${host.name}. The panel is connecting to its agent.`);
        void refresh();
      },
    }),
  );
  const set = (changes: Partial<typeof draft>) => {
    setAdded(null);
    setDraft({ ...draft, ...changes });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setAdded(null);
    add.mutate({
      name: draft.name.trim(),
      url: draft.url.trim(),
      token: draft.token.trim(),
      ...(draft.caPem ? { caPem: draft.caPem } : {}),
      ...(draft.fingerprint.trim() ? { fingerprint: draft.fingerprint.trim() } : {}),
      ...(draft.insecureHttp ? { insecureHttp: true } : {}),
    });
  };
  return (
    <section aria-labelledby="add-host-heading" className="space-y-3 rounded-lg border border-zinc-200 p-3 sm:p-4 dark:border-zinc-800">
      <h2 id="add-host-heading" className="text-base font-semibold">
        Add host
      </h2>
      <form onSubmit={submit} className="grid grid-cols-1 gap-3 sm:grid-cols-3" aria-label="Add host">
        <Field label="Host name" hint="Lower-case letters, digits and '-', e.g. gpu-node-7">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="name"
              autoComplete="off"
              spellCheck={false}
              required
              maxLength={63}
              value={draft.name}
              onChange={(e) => set({ name: e.target.value })}
            />
          )}
        </Field>
        <Field label="Agent URL" hint="e.g. http://10.0.0.5:9300">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="url"
              type="url"
              inputMode="url"
              autoComplete="off"
              spellCheck={false}
              required
              value={draft.url}
              onChange={(e) => set({ url: e.target.value })}
            />
          )}
        </Field>
        <Field label="Agent token" hint="The agent's bearer token (its agent-token file, at least 32 characters). It is never shown again.">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="token"
              type="password"
              autoComplete="new-password"
              required
              value={draft.token}
              onChange={(e) => set({ token: e.target.value })}
            />
          )}
        </Field>
        <HostTlsFields draft={draft} set={set} />
        <div className="sm:col-span-3">
          <button type="submit" className={buttonClass} disabled={add.isPending}>
            {add.isPending ? "Adding…" : "Add host"}
          </button>
        </div>
      </form>
      {add.error && <ErrorNote testId="add-host-error">{add.error.message}</ErrorNote>}
      {added && <OkNote>{added}</OkNote>}
    </section>
  );
}
