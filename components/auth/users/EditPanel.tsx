"use client";
/** Changing a user's role and unit patterns; an admin cannot change their own role. */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import type { Role } from "@/server/contract/actors";
import { buttonClass, inputClass } from "../shared";
import { Field, PATTERN_HINT, RoleSelect } from "./fields";
import { ErrorNote, panelClass, secondaryButton } from "./notes";
import type { PanelProps } from "./panels";
import { parsePatterns, savedMessage } from "./userText";

export function EditPanel({ user: u, isSelf, onDone, onCancel }: PanelProps & { isSelf: boolean }) {
  const trpc = useTRPC();
  const [role, setRole] = useState<Role>(u.role);
  const [patterns, setPatterns] = useState(u.unitPatterns.join(", "));
  const update = useMutation(
    trpc.users.update.mutationOptions({
      onSuccess: (user) => onDone(savedMessage(user)),
    }),
  );
  return (
    <form
      className={panelClass}
      aria-label={`Edit ${u.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        update.mutate({ username: u.name, role, unitPatterns: parsePatterns(patterns) });
      }}
    >
      <h3 className="text-sm font-semibold">Edit {u.name}</h3>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <Field label="Role" hint={isSelf ? "You cannot change your own role; another admin has to." : "Applies to their next request; no sign-out needed."}>
          {(f) => <RoleSelect {...f} value={role} onChange={setRole} disabled={isSelf} autoFocus={!isSelf} />}
        </Field>
        <Field label="Unit patterns" hint={PATTERN_HINT}>
          {(f) => (
            <input
              {...f}
              className={inputClass}
              autoFocus={isSelf}
              autoComplete="off"
              spellCheck={false}
              value={patterns}
              onChange={(e) => setPatterns(e.target.value)}
            />
          )}
        </Field>
      </div>
      {update.error && <ErrorNote>{update.error.message}</ErrorNote>}
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={buttonClass} disabled={update.isPending}>
          {update.isPending ? "Saving…" : "Save"}
        </button>
        <button type="button" className={secondaryButton} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
