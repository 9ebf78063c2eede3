"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { buttonClass, inputClass, PASSWORD_HINT } from "./shared";

export function AccountForm() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const change = useMutation(
    trpc.session.changePassword.mutationOptions({
      onSuccess: () => {
        setCurrent("");
        setNext("");
        setAgain("");
      },
    }),
  );
  const user = me.data?.user;
  if (!user) return null;
  if (user.via !== "session") {
    return (
      <p className="text-sm">{me.data?.demo ? "Demo mode has no passwords." : "Your identity comes from the reverse proxy; change your password there."}</p>
    );
  }
  const mismatch = again.length > 0 && again !== next;
  return (
    <form
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        if (!mismatch) change.mutate({ currentPassword: current, newPassword: next });
      }}
    >
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Signed in as <b>{user.name}</b> ({user.role}). Changing the password signs you out in every other browser.
      </p>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Current password</span>
        <input className={inputClass} type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">New password</span>
        <input
          className={inputClass}
          type="password"
          autoComplete="new-password"
          required
          minLength={12}
          maxLength={1024}
          value={next}
          onChange={(e) => setNext(e.target.value)}
        />
        <span className="mt-1 block text-xs text-zinc-500 dark:text-zinc-400">{PASSWORD_HINT}</span>
      </label>
      <label className="block text-sm">
        <span className="mb-1 block font-medium">New password again</span>
        <input className={inputClass} type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
      </label>
      {mismatch && <p className="text-sm text-red-700 dark:text-red-400">The new passwords differ.</p>}
      {change.error && (
        <p
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {change.error.message}
        </p>
      )}
      {change.isSuccess && (
        <p
          role="status"
          className="rounded-md border border-emerald-300 bg-emerald-50 px-3 py-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200"
        >
          Password changed. Other browsers are signed out.
        </p>
      )}
      <button type="submit" className={buttonClass} disabled={change.isPending || mismatch || !current || !next}>
        {change.isPending ? "Changing…" : "Change password"}
      </button>
    </form>
  );
}
