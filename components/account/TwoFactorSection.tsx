"use client";
/**
 * Two-factor sign-in on the Account page (server/panel/routers/twoFactorRouter.ts): set it up with
 * an authenticator app (a QR code, and the secret as text for apps without a camera), confirmed
 * with its first code; then the recovery codes, shown once. Turning it off asks for the password
 * and a code, and so do new recovery codes (the old ones stop working). Where the role requires it
 * (panel.require_2fa_for) it cannot be turned off here.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { buttonClass, inputClass } from "../auth/shared";
import { formatTime } from "../auth/users/userText";
import { dangerButton, ErrorNote, OkNote, secondaryButton } from "../auth/users/notes";

const sectionClass = "space-y-3 rounded-lg border border-zinc-200 p-3 sm:p-4 dark:border-zinc-800";
const muted = "text-sm text-zinc-500 dark:text-zinc-400";

function CodeField({ id, value, onChange, label = "Code from the app" }: { id: string; value: string; onChange: (v: string) => void; label?: string }) {
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium">
        {label}
      </label>
      <input
        id={id}
        className={inputClass}
        inputMode="numeric"
        autoComplete="one-time-code"
        maxLength={64}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      />
    </div>
  );
}

function PasswordField({ id, value, onChange }: { id: string; value: string; onChange: (v: string) => void }) {
  return (
    <div className="space-y-1">
      <label htmlFor={id} className="block text-sm font-medium">
        Password
      </label>
      <input id={id} type="password" autoComplete="current-password" className={inputClass} value={value} onChange={(e) => onChange(e.target.value)} />
    </div>
  );
}

function RecoveryCodes({ codes, renewed, onDone }: { codes: string[]; renewed: boolean; onDone: () => void }) {
  return (
    <div className="space-y-2" data-testid="recovery-codes">
      <OkNote>{renewed ? "New recovery codes: the old ones no longer work." : "Two-factor sign-in is on."}</OkNote>
      <p className="text-sm">
        Recovery codes: each signs you in once instead of a code, if you lose the phone. Keep them somewhere safe; they are shown only now.
      </p>
      <ul className="grid grid-cols-2 gap-1 font-mono text-sm" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
      <button type="button" className={secondaryButton} onClick={onDone}>
        I have saved them
      </button>
    </div>
  );
}

export function TwoFactorSection() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.session.me.queryOptions());
  const signedIn = !!me.data?.user && !me.data.demo && me.data.user.via === "session";
  const status = useQuery({ ...trpc.twoFactor.status.queryOptions(), enabled: signedIn });
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.twoFactor.status.queryKey() });
    await queryClient.invalidateQueries({ queryKey: trpc.session.me.queryKey() });
  };
  const [code, setCode] = useState("");
  const [password, setPassword] = useState("");
  const [recoveryCodes, setRecoveryCodes] = useState<{ codes: string[]; renewed: boolean } | null>(null);
  const begin = useMutation(trpc.twoFactor.begin.mutationOptions());
  const enable = useMutation(
    trpc.twoFactor.enable.mutationOptions({
      onSuccess: (r) => {
        setCode("");
        setRecoveryCodes({ codes: r.recoveryCodes, renewed: false });
        begin.reset();
      },
    }),
  );
  const disable = useMutation(
    trpc.twoFactor.disable.mutationOptions({
      onSuccess: () => {
        setCode("");
        setPassword("");
        void refresh();
      },
    }),
  );
  const renew = useMutation(
    trpc.twoFactor.renewRecoveryCodes.mutationOptions({
      onSuccess: (r) => {
        setRecoveryCodes({ codes: r.recoveryCodes, renewed: true });
      },
    }),
  );
  if (!signedIn || !status.data) return status.error ? <ErrorNote>{status.error.message}</ErrorNote> : null;
  const s = status.data;
  if (!s.available) return null;
  return (
    <section aria-labelledby="two-factor-heading" className={sectionClass} data-testid="two-factor-section">
      <h2 id="two-factor-heading" className="text-base font-semibold">
        Two-factor sign-in
      </h2>
      {recoveryCodes ? (
        <RecoveryCodes
          codes={recoveryCodes.codes}
          renewed={recoveryCodes.renewed}
          onDone={() => {
            setRecoveryCodes(null);
            void refresh();
          }}
        />
      ) : s.enabled ? (
        <>
          <form
            className="space-y-3"
            aria-label="Turn off two-factor sign-in"
            onSubmit={(e) => {
              e.preventDefault();
              disable.mutate({ password, code: code.trim() });
            }}
          >
            <p className="text-sm" data-testid="two-factor-on">
              On since {formatTime(s.enabledAt)}: signing in asks for a code from your authenticator app. {s.recoveryCodesLeft} recovery codes left.
            </p>
            {s.required ? (
              <p className={muted}>Your role must use it; if you lose the phone, an admin can reset it.</p>
            ) : (
              <>
                <PasswordField id="two-factor-password" value={password} onChange={setPassword} />
                <CodeField id="two-factor-off-code" value={code} onChange={setCode} label="Code from the app (or a recovery code)" />
                {disable.error && <ErrorNote>{disable.error.message}</ErrorNote>}
                <button type="submit" className={dangerButton} disabled={disable.isPending || !password || !code.trim()}>
                  Turn off two-factor sign-in
                </button>
              </>
            )}
          </form>
          <RenewRecoveryCodes pending={renew.isPending} error={renew.error?.message ?? null} onRenew={(input) => renew.mutate(input)} />
        </>
      ) : begin.data ? (
        <form
          className="space-y-3"
          aria-label="Confirm two-factor sign-in"
          onSubmit={(e) => {
            e.preventDefault();
            enable.mutate({ code: code.trim() });
          }}
        >
          <p className="text-sm">Scan this with your authenticator app (or type the secret into it), then type the 6-digit code it shows.</p>
          {/* eslint-disable-next-line @next/next/no-img-element -- a data: URL made by the server, nothing to optimise */}
          <img src={begin.data.qrDataUrl} width={224} height={224} alt="QR code of the two-factor secret for your authenticator app" />
          <p className="text-sm">
            Secret:{" "}
            <code className="break-all select-all" data-testid="two-factor-secret">
              {begin.data.secret}
            </code>
          </p>
          <CodeField id="two-factor-code" value={code} onChange={setCode} />
          {enable.error && <ErrorNote>{enable.error.message}</ErrorNote>}
          <button type="submit" className={buttonClass} disabled={enable.isPending || !code.trim()}>
            Turn on
          </button>
        </form>
      ) : (
        <div className="space-y-3">
          {s.required ? (
            <p
              role="note"
              className="rounded-md border border-amber-300 bg-amber-50 p-3 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
            >
              Your role ({me.data?.user?.role}) must sign in with two factors: set it up now to use the panel.
            </p>
          ) : (
            <p className={muted}>Off. With it on, signing in also asks for a code from an authenticator app on your phone.</p>
          )}
          {begin.error && <ErrorNote>{begin.error.message}</ErrorNote>}
          <button type="button" className={buttonClass} disabled={begin.isPending} onClick={() => begin.mutate()}>
            Set up two-factor sign-in
          </button>
        </div>
      )}
    </section>
  );
}

/** New recovery codes (the old ones void), with the password and a code: its own form, so Enter never turns it off. */
function RenewRecoveryCodes({
  pending,
  error,
  onRenew,
}: {
  pending: boolean;
  error: string | null;
  onRenew: (input: { password: string; code: string }) => void;
}) {
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  return (
    <details className="text-sm">
      <summary className="cursor-pointer font-medium">New recovery codes</summary>
      <form
        className="mt-2 space-y-3"
        aria-label="New recovery codes"
        onSubmit={(e) => {
          e.preventDefault();
          onRenew({ password, code: code.trim() });
        }}
      >
        <p className={muted}>Used most of them, or think someone saw them? New ones replace them all.</p>
        <PasswordField id="two-factor-renew-password" value={password} onChange={setPassword} />
        <CodeField id="two-factor-renew-code" value={code} onChange={setCode} label="Code from the app (or a recovery code)" />
        {error && <ErrorNote>{error}</ErrorNote>}
        <button type="submit" className={secondaryButton} disabled={pending || !password || !code.trim()}>
          Make new recovery codes
        </button>
      </form>
    </details>
  );
}
