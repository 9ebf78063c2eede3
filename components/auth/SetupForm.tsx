"use client";
import { useMutation } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTRPC } from "@/components/trpc";
import { CredentialFields } from "./CredentialFields";
import { buttonClass, inputClass, loadPage } from "./shared";

/** First run: the token comes in the URL fragment (#token=…), which never reaches a server log. */
export function SetupForm() {
  const trpc = useTRPC();
  const [token, setToken] = useState<string | null>(null);
  const [username, setUsername] = useState("admin");
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  useEffect(() => {
    const fromHash = new URLSearchParams(window.location.hash.slice(1)).get("token");
    // Reading the URL fragment needs the browser; the form renders once it is known.
    // eslint-disable-next-line react-hooks/set-state-in-effect
    setToken(fromHash ?? "");
    // keep the token out of the history and of anything copied from the address bar
    if (fromHash) window.history.replaceState(null, "", window.location.pathname);
  }, []);
  const complete = useMutation(trpc.setup.complete.mutationOptions({ onSuccess: () => loadPage("/") }));

  if (token === null) return null;
  if (token === "") {
    return (
      <p role="alert" className="text-sm">
        This page needs the one-time setup link the panel printed in its console (<code>/setup#token=…</code>). Run <code>npm run user -- setup-token</code> on
        the panel host for a new one.
      </p>
    );
  }
  const mismatch = again.length > 0 && again !== password;
  return (
    <form
      className="space-y-4"
      onSubmit={(e) => {
        e.preventDefault();
        if (!mismatch) complete.mutate({ token, username: username.trim(), password });
      }}
    >
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Create the first admin account. More users: <code>npm run user -- add NAME --role viewer|operator|admin</code>.
      </p>
      <CredentialFields username={username} password={password} onUsername={setUsername} onPassword={setPassword} newPassword />
      <label className="block text-sm">
        <span className="mb-1 block font-medium">Password again</span>
        <input
          className={inputClass}
          name="password-again"
          type="password"
          autoComplete="new-password"
          required
          value={again}
          onChange={(e) => setAgain(e.target.value)}
        />
      </label>
      {mismatch && <p className="text-sm text-red-700 dark:text-red-400">The passwords differ.</p>}
      {complete.error && (
        <p
          role="alert"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {complete.error.message}
        </p>
      )}
      <button type="submit" className={buttonClass} disabled={complete.isPending || mismatch || !password}>
        {complete.isPending ? "Creating…" : "Create admin and sign in"}
      </button>
    </form>
  );
}
