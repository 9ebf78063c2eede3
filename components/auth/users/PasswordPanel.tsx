"use client";
/** Resetting someone's password: typed twice, then confirmed, because it ends all their sessions. */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { buttonClass } from "../shared";
import { NewPasswordFields } from "./fields";
import { dangerButton, ErrorNote, panelClass, secondaryButton } from "./notes";
import type { PanelProps } from "./panels";

export function PasswordPanel({ user: u, onDone, onCancel }: PanelProps) {
  const trpc = useTRPC();
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [confirming, setConfirming] = useState(false);
  const reset = useMutation(
    trpc.users.resetPassword.mutationOptions({
      onSuccess: (user) => onDone(`New password set for ${user.name}; their sessions have ended.`),
      onError: () => setConfirming(false),
    }),
  );
  const mismatch = again.length > 0 && again !== password;
  return (
    <form
      className={panelClass}
      aria-label={`Reset password of ${u.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (mismatch || !password) return;
        if (!confirming) setConfirming(true);
        else reset.mutate({ username: u.name, password });
      }}
    >
      <h3 className="text-sm font-semibold">Reset the password of {u.name}</h3>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2">
        <NewPasswordFields
          labels={["New password", "New password again"]}
          autoFocus
          password={password}
          again={again}
          onPassword={(value) => {
            setConfirming(false);
            setPassword(value);
          }}
          onAgain={(value) => {
            setConfirming(false);
            setAgain(value);
          }}
        />
      </div>
      {mismatch && <p className="text-sm text-red-700 dark:text-red-400">The passwords differ.</p>}
      {reset.error && <ErrorNote>{reset.error.message}</ErrorNote>}
      {confirming && (
        <p
          role="alert"
          className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
        >
          {u.name}&apos;s sessions will end: they are signed out in every browser at once and must sign in with the new password.
        </p>
      )}
      <div className="flex flex-wrap gap-2">
        {confirming ? (
          <button type="submit" className={dangerButton} disabled={reset.isPending} autoFocus>
            {reset.isPending ? "Resetting…" : `Reset and sign ${u.name} out`}
          </button>
        ) : (
          <button type="submit" className={buttonClass} disabled={mismatch || !password || !again}>
            Reset password…
          </button>
        )}
        <button type="button" className={secondaryButton} onClick={confirming ? () => setConfirming(false) : onCancel}>
          {confirming ? "Back" : "Cancel"}
        </button>
      </div>
    </form>
  );
}
