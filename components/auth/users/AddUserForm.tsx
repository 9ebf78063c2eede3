"use client";
/** Adding a user: name, role, unit patterns and a first password; what was typed stays when the server refuses. */
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useTRPC } from "@/components/trpc";
import type { Role } from "@/server/contract/actors";
import { buttonClass, inputClass } from "../shared";
import { Field, NewPasswordFields, PATTERN_HINT, RoleSelect } from "./fields";
import { ErrorNote, OkNote } from "./notes";
import { useRefreshUsers } from "./useRefreshUsers";
import { parsePatterns } from "./userText";

export function AddUserForm() {
  const trpc = useTRPC();
  const refresh = useRefreshUsers();
  const empty = { username: "", role: "operator" as Role, patterns: "", password: "", again: "" };
  const [draft, setDraft] = useState(empty);
  const [added, setAdded] = useState<string | null>(null);
  const create = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: (user) => {
        setDraft(empty);
        setAdded(`Added ${user.name} (${user.role}). They can sign in now.`);
        void refresh();
      },
    }),
  );
  const mismatch = draft.again.length > 0 && draft.again !== draft.password;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (mismatch) return;
    setAdded(null);
    create.mutate({ username: draft.username.trim(), role: draft.role, unitPatterns: parsePatterns(draft.patterns), password: draft.password });
  };
  const set = (changes: Partial<typeof draft>) => {
    setAdded(null);
    setDraft({ ...draft, ...changes });
  };
  return (
    <section aria-labelledby="add-user-heading" className="space-y-3 rounded-lg border border-zinc-200 p-3 sm:p-4 dark:border-zinc-800">
      <h2 id="add-user-heading" className="text-base font-semibold">
        Add user
      </h2>
      <form onSubmit={submit} className="grid grid-cols-1 gap-3 sm:grid-cols-2" aria-label="Add user" data-testid="add-user-form">
        <Field label="User name" hint="Letters, digits and . _ @ + -">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="username"
              autoComplete="off"
              spellCheck={false}
              required
              maxLength={128}
              value={draft.username}
              onChange={(e) => set({ username: e.target.value })}
            />
          )}
        </Field>
        <Field label="Role">{(f) => <RoleSelect {...f} name="role" value={draft.role} onChange={(role) => set({ role })} />}</Field>
        <div className="sm:col-span-2">
          <Field label="Unit patterns" hint={PATTERN_HINT}>
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="unitPatterns"
                autoComplete="off"
                spellCheck={false}
                placeholder={draft.role === "operator" ? "vllm-team-a-*" : "(not used by this role)"}
                value={draft.patterns}
                onChange={(e) => set({ patterns: e.target.value })}
              />
            )}
          </Field>
        </div>
        <NewPasswordFields
          labels={["Password", "Password again"]}
          names={["password", "passwordAgain"]}
          password={draft.password}
          again={draft.again}
          onPassword={(password) => set({ password })}
          onAgain={(again) => set({ again })}
        />
        <div className="space-y-3 sm:col-span-2">
          {mismatch && <p className="text-sm text-red-700 dark:text-red-400">The passwords differ.</p>}
          {create.error && <ErrorNote testId="add-user-error">{create.error.message}</ErrorNote>}
          {added && <OkNote>{added}</OkNote>}
          <button type="submit" className={buttonClass} disabled={create.isPending || mismatch || !draft.username.trim() || !draft.password || !draft.again}>
            {create.isPending ? "Adding…" : "Add user"}
          </button>
        </div>
      </form>
    </section>
  );
}
