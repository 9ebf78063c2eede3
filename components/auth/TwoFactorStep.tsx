"use client";
/**
 * The sign-in's second step for an account with two-factor sign-in: the code from the
 * authenticator app (or a recovery code). No session exists until it is right; when the step has
 * timed out or had too many wrong codes, the password is asked again.
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { buttonClass, inputClass, loadPage } from "./shared";

export function TwoFactorStep({ challenge, next, onRestart }: { challenge: string; next: string; onRestart: (message: string) => void }) {
  const trpc = useTRPC();
  const [code, setCode] = useState("");
  const verify = useMutation(
    trpc.session.loginCode.mutationOptions({
      onSuccess: () => loadPage(next),
      onError: (err) => {
        setCode("");
        if (err.data?.code === "PRECONDITION_FAILED") onRestart(err.message);
      },
    }),
  );
  const error = verify.error;
  return (
    <form
      className="space-y-4"
      aria-label="Two-factor code"
      onSubmit={(e) => {
        e.preventDefault();
        verify.mutate({ challenge, code: code.trim() });
      }}
    >
      <p className="text-sm">Your password was right. Now the code your authenticator app shows for gpudeck, or one of your recovery codes.</p>
      <div className="space-y-1">
        <label htmlFor="login-code" className="block text-sm font-medium">
          Authentication code
        </label>
        <input
          id="login-code"
          className={inputClass}
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={64}
          autoFocus
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
      </div>
      {error && (
        <p
          role="alert"
          data-testid="login-error"
          className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          {error.message}
        </p>
      )}
      <button type="submit" className={buttonClass} disabled={verify.isPending || !code.trim()}>
        {verify.isPending ? "Checking…" : "Verify"}
      </button>
    </form>
  );
}
