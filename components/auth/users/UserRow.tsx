"use client";
/**
 * One user: a table row on wide screens, a card on a phone; its actions (edit, reset password,
 * disable or enable), the open panel below it and the answer to the last change.
 */
import { useMutation } from "@tanstack/react-query";
import Link from "next/link";
import { useState, type ReactNode } from "react";
import { useTRPC } from "@/components/trpc";
import type { PanelUser } from "@/server/contract/users";
import { DisablePanel } from "./DisablePanel";
import { EditPanel } from "./EditPanel";
import { ErrorNote, OkNote, secondaryButton } from "./notes";
import type { Panel } from "./panels";
import { PasswordPanel } from "./PasswordPanel";
import { useRefreshUsers } from "./useRefreshUsers";
import { formatTime, unitScope } from "./userText";

const SCOPE_CLASS = {
  all: "text-zinc-500 dark:text-zinc-400",
  none: "text-zinc-500 dark:text-zinc-400",
  unset: "text-amber-800 dark:text-amber-300",
  patterns: "break-all font-mono text-xs",
} as const;

function UnitScope({ user }: { user: PanelUser }) {
  const scope = unitScope(user);
  return <span className={SCOPE_CLASS[scope.kind]}>{scope.text}</span>;
}

function Cell({ label, children, className = "" }: { label: string; children: ReactNode; className?: string }) {
  return (
    <td className={`flex gap-2 px-3 py-1 sm:table-cell sm:py-2 ${className}`}>
      <span className="w-24 shrink-0 text-xs text-zinc-500 dark:text-zinc-400 sm:hidden">{label}</span>
      <span className="min-w-0">{children}</span>
    </td>
  );
}

export function UserRow({ user: u, isSelf, panel, setPanel }: { user: PanelUser; isSelf: boolean; panel: Panel | null; setPanel: (p: Panel | null) => void }) {
  const trpc = useTRPC();
  const refresh = useRefreshUsers();
  const [done, setDone] = useState<string | null>(null);
  const enable = useMutation(
    trpc.users.setDisabled.mutationOptions({
      onSuccess: (user) => {
        setDone(`${user.name} is enabled and can sign in again.`);
        void refresh();
      },
    }),
  );
  const resetTwoFactor = useMutation(
    trpc.users.resetTwoFactor.mutationOptions({
      onSuccess: (user) => {
        setDone(`Two-factor sign-in of ${user.name} is reset: they sign in with their password and set it up again.`);
        void refresh();
      },
    }),
  );
  const open = (p: Panel) => {
    setDone(null);
    enable.reset();
    resetTwoFactor.reset();
    setPanel(panel === p ? null : p);
  };
  const finished = (message: string) => {
    setDone(message);
    setPanel(null);
    void refresh();
  };
  return (
    <tbody
      className="block border-t border-zinc-200 first-of-type:border-t-0 sm:table-row-group sm:first-of-type:border-t dark:border-zinc-800"
      data-testid="user-row"
      data-user={u.name}
      data-state={u.disabled ? "disabled" : "enabled"}
    >
      <tr className="block py-2 align-top sm:table-row sm:py-0">
        <Cell label="User">
          <span className="break-all font-medium">{u.name}</span>
          {isSelf && <span className="ml-1 text-xs text-zinc-500 dark:text-zinc-400">(you)</span>}
        </Cell>
        <Cell label="Role">{u.role}</Cell>
        <Cell label="Unit patterns">
          <UnitScope user={u} />
        </Cell>
        <Cell label="State">
          {u.disabled ? (
            <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-semibold text-red-900 dark:bg-red-950 dark:text-red-200">disabled</span>
          ) : (
            <span className="rounded bg-emerald-100 px-1.5 py-0.5 text-xs font-semibold text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200">
              enabled
            </span>
          )}
          {!u.hasPassword && <span className="block text-xs text-zinc-500 dark:text-zinc-400">no password (proxy sign-in only)</span>}
          {u.twoFactor && <span className="block text-xs text-zinc-500 dark:text-zinc-400">two-factor sign-in on</span>}
        </Cell>
        <Cell label="Last sign-in">
          <span className="tabular-nums" title={u.lastSignInAt === null ? "No sign-in in the audit log" : new Date(u.lastSignInAt).toISOString()}>
            {formatTime(u.lastSignInAt)}
          </span>
        </Cell>
        <td className="px-3 py-2 sm:py-2">
          <div className="flex flex-wrap gap-2" role="group" aria-label={`Actions for ${u.name}`}>
            <button type="button" className={secondaryButton} aria-expanded={panel === "edit"} onClick={() => open("edit")}>
              Edit
            </button>
            {!isSelf && (
              <button type="button" className={secondaryButton} aria-expanded={panel === "password"} onClick={() => open("password")}>
                Reset password
              </button>
            )}
            {!isSelf && u.twoFactor && (
              <button
                type="button"
                className={secondaryButton}
                disabled={resetTwoFactor.isPending}
                onClick={() => {
                  setDone(null);
                  setPanel(null);
                  if (window.confirm(`Reset the two-factor sign-in of ${u.name}? They sign in with the password alone until they set it up again.`))
                    resetTwoFactor.mutate({ username: u.name });
                }}
              >
                Reset two-factor
              </button>
            )}
            {!isSelf &&
              (u.disabled ? (
                <button
                  type="button"
                  className={secondaryButton}
                  disabled={enable.isPending}
                  onClick={() => {
                    setDone(null);
                    setPanel(null);
                    enable.mutate({ username: u.name, disabled: false });
                  }}
                >
                  {enable.isPending ? "Enabling…" : "Enable"}
                </button>
              ) : (
                <button type="button" className={secondaryButton} aria-expanded={panel === "disable"} onClick={() => open("disable")}>
                  Disable
                </button>
              ))}
          </div>
          {isSelf && (
            <p className="mt-1 text-xs text-zinc-500 dark:text-zinc-400">
              Your own account: another admin disables it; change your password on the{" "}
              <Link href="/account" className="text-blue-700 underline dark:text-blue-400">
                account page
              </Link>
              .
            </p>
          )}
        </td>
      </tr>
      {(panel || done || enable.error || resetTwoFactor.error) && (
        <tr className="block sm:table-row">
          <td colSpan={6} className="block px-3 pb-3 sm:table-cell">
            <div className="space-y-3">
              {done && <OkNote>{done}</OkNote>}
              {enable.error && <ErrorNote>{enable.error.message}</ErrorNote>}
              {resetTwoFactor.error && <ErrorNote>{resetTwoFactor.error.message}</ErrorNote>}
              {panel === "edit" && <EditPanel user={u} isSelf={isSelf} onDone={finished} onCancel={() => setPanel(null)} />}
              {panel === "password" && <PasswordPanel user={u} onDone={finished} onCancel={() => setPanel(null)} />}
              {panel === "disable" && <DisablePanel user={u} onDone={finished} onCancel={() => setPanel(null)} />}
            </div>
          </td>
        </tr>
      )}
    </tbody>
  );
}
