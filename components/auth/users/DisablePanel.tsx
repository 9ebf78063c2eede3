"use client";
/** Disabling a user, after saying what it does: their sessions end now. */
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";
import { dangerButton, ErrorNote, panelClass, secondaryButton } from "./notes";
import type { PanelProps } from "./panels";

export function DisablePanel({ user: u, onDone, onCancel }: PanelProps) {
  const trpc = useTRPC();
  const disable = useMutation(trpc.users.setDisabled.mutationOptions({ onSuccess: (user) => onDone(`${user.name} is disabled and signed out everywhere.`) }));
  return (
    <form
      className={panelClass}
      aria-label={`Disable ${u.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        disable.mutate({ username: u.name, disabled: true });
      }}
    >
      <p className="text-sm">
        Disable <b>{u.name}</b>? Their sessions end now (open pages are signed out) and they cannot sign in until an admin enables the account again.
      </p>
      {disable.error && <ErrorNote>{disable.error.message}</ErrorNote>}
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={dangerButton} disabled={disable.isPending} autoFocus>
          {disable.isPending ? "Disabling…" : `Disable ${u.name}`}
        </button>
        <button type="button" className={secondaryButton} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
