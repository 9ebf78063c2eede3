"use client";
import { useMutation, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useSearchParams } from "next/navigation";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { CredentialFields } from "./CredentialFields";
import { buttonClass, loadPage, safeNextPath } from "./shared";
import { useHydrated } from "@/components/live/LiveProvider";
import { SsoButton, SsoRefusal } from "./SsoSignIn";
import { TwoFactorStep } from "./TwoFactorStep";

export function LoginForm() {
  const trpc = useTRPC();
  const params = useSearchParams();
  const next = safeNextPath(params.get("next"));
  const meQuery = useQuery(trpc.session.me.queryOptions());
  const optionsQuery = useQuery(trpc.session.signInOptions.queryOptions());
  // the first render in the browser must match the server's, which had no answers: this form is
  // hydrated in its own Suspense boundary, on a busy machine after the header's session.me came
  // back, and drawing that answer at once was React error #418 (seen in e2e-oidc under load)
  const hydrated = useHydrated();
  const me = { data: hydrated ? meQuery.data : undefined };
  const options = { data: hydrated ? optionsQuery.data : undefined };
  const sso = options.data?.sso ?? null;
  const localLogin = options.data?.localLogin ?? true;
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  // two-factor sign-in: the password was right, the code comes next (no session until then)
  const [challenge, setChallenge] = useState<string | null>(null);
  const [restarted, setRestarted] = useState<string | null>(null);
  const login = useMutation(
    trpc.session.login.mutationOptions({
      // a full load, so live streams and caches start over with the new session
      onSuccess: (r) => {
        setPassword("");
        if (r.twoFactor) setChallenge(r.twoFactor.challenge);
        else loadPage(next);
      },
      onError: () => setPassword(""),
    }),
  );

  if (me.data?.demo) {
    return (
      <p className="text-sm">
        Demo mode needs no sign-in.{" "}
        <Link href="/" className="text-blue-700 underline dark:text-blue-400">
          Go to the units
        </Link>
        .
      </p>
    );
  }
  if (me.data?.user) {
    return (
      <p className="text-sm">
        Signed in as <b>{me.data.user.name}</b>.{" "}
        <Link href={next} className="text-blue-700 underline dark:text-blue-400">
          Continue
        </Link>
      </p>
    );
  }
  const error = login.error;
  const rateLimited = error?.data?.code === "TOO_MANY_REQUESTS";
  const ssoPart = (
    <>
      <SsoRefusal code={params.get("error")} />
      {sso && <SsoButton name={sso.name} loginPath={sso.loginPath} next={next} alone={!localLogin} />}
    </>
  );
  if (!localLogin && params.get("local") !== "1") return <div className="space-y-4">{ssoPart}</div>;
  if (challenge)
    return (
      <TwoFactorStep
        challenge={challenge}
        next={next}
        onRestart={(message) => {
          setChallenge(null);
          setRestarted(message);
          login.reset();
        }}
      />
    );
  return (
    <div className="space-y-4">
      {ssoPart}
      <form
        className="space-y-4"
        onSubmit={(e) => {
          e.preventDefault();
          login.mutate({ username: username.trim(), password });
        }}
      >
        {me.data?.setupPending && (
          <div
            role="note"
            className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          >
            No admin account exists yet. Open the one-time setup link the panel printed in its console when it started (valid for 1 h), or run{" "}
            <code>npm run user -- setup-token</code> on the panel host for a new one.
          </div>
        )}
        {me.data?.signedOutReason && !error && me.data.signedOutReason !== "sign in first" && (
          <p role="status" className="text-sm text-zinc-600 dark:text-zinc-400">
            {me.data.signedOutReason[0]!.toUpperCase() + me.data.signedOutReason.slice(1)}.
          </p>
        )}
        <CredentialFields username={username} password={password} onUsername={setUsername} onPassword={setPassword} autoFocus />
        {restarted && !error && (
          <p
            role="alert"
            data-testid="login-error"
            className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
          >
            {restarted}
          </p>
        )}
        {error && (
          <p
            role="alert"
            data-testid="login-error"
            className={`rounded-md border px-3 py-2 text-sm ${rateLimited ? "border-amber-300 bg-amber-50 text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100" : "border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"}`}
          >
            {error.message}
          </p>
        )}
        <button type="submit" className={buttonClass} disabled={login.isPending || !username || !password}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </div>
  );
}
