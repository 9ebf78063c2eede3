"use client";
/**
 * Making an API token: name, role (at most your own), unit patterns for an operator token, how
 * long it lasts; admins also choose a service token. The token is shown once, with a button to
 * copy it: the panel keeps only its hash.
 */
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/components/trpc";
import type { Role } from "@/server/contract/actors";
import { buttonClass, inputClass } from "../auth/shared";
import { Field, RoleSelect } from "../auth/users/fields";
import { ErrorNote, OkNote, secondaryButton } from "../auth/users/notes";
import { parsePatterns } from "../auth/users/userText";

const DAYS = [7, 30, 90, 365];

export function NewTokenForm({ admin, myRole, onMade }: { admin: boolean; myRole: Role; onMade: () => void }) {
  const trpc = useTRPC();
  const empty = { name: "", role: (myRole === "admin" ? "operator" : myRole) as Role, units: "", days: 30, kind: "personal" as "personal" | "service" };
  const [draft, setDraft] = useState(empty);
  const [made, setMade] = useState<{ name: string; token: string } | null>(null);
  const [copied, setCopied] = useState(false);
  const create = useMutation(
    trpc.tokens.create.mutationOptions({
      onSuccess: (t) => {
        setMade({ name: t.name, token: t.token });
        setCopied(false);
        setDraft(empty);
        onMade();
      },
    }),
  );
  const set = (changes: Partial<typeof draft>) => setDraft({ ...draft, ...changes });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setMade(null);
    const units = parsePatterns(draft.units);
    create.mutate({
      name: draft.name.trim(),
      role: draft.role,
      ...(draft.role === "operator" && units.length > 0 ? { units } : {}),
      expiresInDays: draft.days,
      kind: draft.kind,
    });
  };
  return (
    <div className="space-y-3">
      <form onSubmit={submit} className="grid grid-cols-1 gap-3" aria-label="New API token" data-testid="new-token-form">
        <Field label="Token name" hint="What will use it, e.g. ci-deploy">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="token-name"
              autoComplete="off"
              spellCheck={false}
              required
              maxLength={64}
              value={draft.name}
              onChange={(e) => set({ name: e.target.value })}
            />
          )}
        </Field>
        {admin && (
          <Field label="Kind" hint="A service token belongs to no person: it keeps its rights when you leave.">
            {(f) => (
              <select {...f} className={inputClass} value={draft.kind} onChange={(e) => set({ kind: e.target.value as "personal" | "service" })}>
                <option value="personal">Personal (acts as you, never beyond your rights)</option>
                <option value="service">Service (for a machine)</option>
              </select>
            )}
          </Field>
        )}
        <Field label="Role" hint={myRole === "admin" ? undefined : `At most your own (${myRole}).`}>
          {(f) => <RoleSelect {...f} name="token-role" value={draft.role} onChange={(role) => set({ role })} />}
        </Field>
        {draft.role === "operator" && (
          <Field label="Units" hint={myRole === "operator" ? "Unit globs within your own; empty: all of yours." : "Unit globs, e.g. vllm-* or gpu-a:vllm-*."}>
            {(f) => (
              <input {...f} className={inputClass} name="token-units" spellCheck={false} value={draft.units} onChange={(e) => set({ units: e.target.value })} />
            )}
          </Field>
        )}
        <Field label="Expires after">
          {(f) => (
            <select {...f} className={inputClass} value={draft.days} onChange={(e) => set({ days: Number(e.target.value) })}>
              {DAYS.map((d) => (
                <option key={d} value={d}>
                  {d} days
                </option>
              ))}
            </select>
          )}
        </Field>
        <div>
          <button type="submit" className={buttonClass} disabled={create.isPending || draft.name.trim() === ""}>
            {create.isPending ? "Making…" : "Make token"}
          </button>
        </div>
      </form>
      {create.error && <ErrorNote testId="token-error">{create.error.message}</ErrorNote>}
      {made && (
        <div className="space-y-2" data-testid="new-token">
          <OkNote>Token {made.name} made. Copy it now: it is not shown again.</OkNote>
          <code className="block rounded-md border border-zinc-300 bg-white px-3 py-2 font-mono text-sm break-all select-all dark:border-zinc-700 dark:bg-zinc-950">
            {made.token}
          </code>
          <button
            type="button"
            className={secondaryButton}
            onClick={() =>
              void navigator.clipboard?.writeText(made.token).then(
                () => setCopied(true),
                () => setCopied(false),
              )
            }
          >
            {copied ? "Copied" : "Copy token"}
          </button>
        </div>
      )}
    </div>
  );
}
