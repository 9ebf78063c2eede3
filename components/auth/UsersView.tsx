"use client";
/**
 * Admins manage panel users: add, change role and unit patterns, disable/enable, reset a
 * password. The server decides (admin only, no self-lockout, never the last admin) and audits;
 * this page shows its answers in plain words and keeps whatever the admin typed when a change is
 * refused. A table on wide screens, one card per user on a phone.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { useTRPC } from "@/components/trpc";
import type { PanelUser } from "@/server/contract/users";
import { buttonClass, inputClass } from "./shared";

type Role = PanelUser["role"];
const ROLES: { value: Role; label: string }[] = [
  { value: "viewer", label: "viewer (sees, changes nothing)" },
  { value: "operator", label: "operator (acts on their units)" },
  { value: "admin", label: "admin (everything, users too)" },
];
const PATTERN_HINT = "Unit globs, separated by commas or spaces, e.g. vllm-team-a-*. Only operators use them.";
const NEW_PASSWORD_HINT = "At least 12 characters, not the user name. Hand it over out of band.";

const secondaryButton =
  "min-h-10 rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-50 disabled:opacity-50 dark:border-zinc-700 dark:hover:bg-zinc-900";
const dangerButton = "min-h-10 rounded-md bg-red-700 px-3 py-1.5 text-sm font-semibold text-white hover:bg-red-800 disabled:opacity-50";
const labelText = "mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400";

/** "vllm-a-*, vllm-b-*" → ["vllm-a-*", "vllm-b-*"] (unit names hold neither commas nor spaces). */
export function parsePatterns(text: string): string[] {
  return text.split(/[\s,]+/).filter((p) => p.length > 0);
}

function ErrorNote({ children, testId }: { children: ReactNode; testId?: string }) {
  return (
    <p
      role="alert"
      data-testid={testId}
      className="rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
    >
      {children}
    </p>
  );
}

function OkNote({ children }: { children: ReactNode }) {
  return (
    <p
      role="status"
      className="rounded-md border border-emerald-300 bg-emerald-50 px-3 py-2 text-sm text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-200"
    >
      {children}
    </p>
  );
}

type FieldProps = { id: string; "aria-describedby"?: string };

/** A labelled control; the hint is its description, not part of its name. */
function Field({ label, hint, children }: { label: string; hint?: string; children: (props: FieldProps) => ReactNode }) {
  const id = useId();
  return (
    <div className="text-sm">
      <label htmlFor={id} className={labelText}>
        {label}
      </label>
      {children({ id, "aria-describedby": hint ? `${id}-hint` : undefined })}
      {hint && (
        <p id={`${id}-hint`} className="mt-1 text-xs text-zinc-500">
          {hint}
        </p>
      )}
    </div>
  );
}

/** A new password and its repetition (adding a user, resetting a password). */
function NewPasswordFields(props: {
  labels: [string, string];
  names?: [string, string];
  autoFocus?: boolean;
  password: string;
  again: string;
  onPassword: (value: string) => void;
  onAgain: (value: string) => void;
}) {
  const { labels, names, autoFocus, password, again, onPassword, onAgain } = props;
  return (
    <>
      <Field label={labels[0]} hint={NEW_PASSWORD_HINT}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name={names?.[0]}
            type="password"
            autoFocus={autoFocus}
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={1024}
            value={password}
            onChange={(e) => onPassword(e.target.value)}
          />
        )}
      </Field>
      <Field label={labels[1]}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name={names?.[1]}
            type="password"
            autoComplete="new-password"
            required
            value={again}
            onChange={(e) => onAgain(e.target.value)}
          />
        )}
      </Field>
    </>
  );
}

function RoleSelect({
  value,
  onChange,
  ...rest
}: { value: Role; onChange: (r: Role) => void; disabled?: boolean; name?: string; autoFocus?: boolean } & Partial<FieldProps>) {
  return (
    <select className={inputClass} {...rest} value={value} onChange={(e) => onChange(e.target.value as Role)}>
      {ROLES.map((r) => (
        <option key={r.value} value={r.value}>
          {r.label}
        </option>
      ))}
    </select>
  );
}

function formatTime(ms: number | null): string {
  return ms === null ? "—" : new Date(ms).toLocaleString();
}

function useRefreshUsers() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  return () => queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
}

/** The page: admins get the user list; anyone else a plain sentence. */
export function UsersView() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const user = me.data?.user;
  if (me.isPending) return <p className="text-sm text-zinc-500">Loading…</p>;
  if (me.data?.demo) {
    return (
      <div className="space-y-3">
        <h1 className="text-xl font-semibold">Users</h1>
        <p className="text-sm" data-testid="users-demo">
          Demo mode has no users: everyone is the demo admin.
        </p>
      </div>
    );
  }
  if (!user) return null; // signed out: the user menu sends the browser to sign in
  if (user.role !== "admin") {
    return (
      <div className="space-y-3">
        <h1 className="text-xl font-semibold">Users</h1>
        <p
          role="alert"
          data-testid="users-forbidden"
          className="rounded-md border border-zinc-300 bg-zinc-50 px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-900"
        >
          Only admins can manage users. Ask an admin to add someone or change what they may do.
        </p>
      </div>
    );
  }
  return <UsersAdmin self={user.name} />;
}

function UsersAdmin({ self }: { self: string }) {
  const trpc = useTRPC();
  const users = useQuery(trpc.users.list.queryOptions(undefined, { retry: false, refetchInterval: 30_000 }));
  const [open, setOpen] = useState<{ name: string; panel: Panel } | null>(null);
  const list = users.data ?? [];
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Users</h1>
        <p className="text-sm text-zinc-500">Who may sign in, and what they may do. Every change is in the audit log.</p>
      </div>

      <AddUserForm />

      <section aria-labelledby="users-heading" className="space-y-2">
        <h2 id="users-heading" className="text-base font-semibold">
          Accounts{users.data ? ` (${list.length})` : ""}
        </h2>
        {users.error ? (
          <ErrorNote testId="users-error">{users.error.message}</ErrorNote>
        ) : users.isPending ? (
          <p className="text-sm text-zinc-500">Loading…</p>
        ) : (
          <div className="rounded-lg border border-zinc-200 sm:overflow-x-auto dark:border-zinc-800">
            <table className="block w-full text-left text-sm sm:table" data-testid="users-table">
              <thead className="hidden bg-zinc-50 text-xs text-zinc-600 sm:table-header-group dark:bg-zinc-900 dark:text-zinc-400">
                <tr>
                  {["User", "Role", "Unit patterns", "State", "Last sign-in", "Actions"].map((h) => (
                    <th key={h} scope="col" className="px-3 py-2 font-medium">
                      {h}
                    </th>
                  ))}
                </tr>
              </thead>
              {list.map((u) => (
                <UserRow
                  key={u.name}
                  user={u}
                  isSelf={u.name.toLowerCase() === self.toLowerCase()}
                  panel={open?.name === u.name ? open.panel : null}
                  setPanel={(panel) => setOpen(panel ? { name: u.name, panel } : null)}
                />
              ))}
            </table>
          </div>
        )}
      </section>
    </div>
  );
}

function AddUserForm() {
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

type Panel = "edit" | "password" | "disable";

function roleUnits(u: PanelUser): ReactNode {
  if (u.role === "admin") return <span className="text-zinc-500">all units</span>;
  if (u.role === "viewer") return <span className="text-zinc-500">none (viewer)</span>;
  if (u.unitPatterns.length === 0) return <span className="text-amber-800 dark:text-amber-300">none yet: may act on no unit</span>;
  return <span className="break-all font-mono text-xs">{u.unitPatterns.join(", ")}</span>;
}

function Cell({ label, children, className = "" }: { label: string; children: ReactNode; className?: string }) {
  return (
    <td className={`flex gap-2 px-3 py-1 sm:table-cell sm:py-2 ${className}`}>
      <span className="w-24 shrink-0 text-xs text-zinc-500 sm:hidden">{label}</span>
      <span className="min-w-0">{children}</span>
    </td>
  );
}

function UserRow({ user: u, isSelf, panel, setPanel }: { user: PanelUser; isSelf: boolean; panel: Panel | null; setPanel: (p: Panel | null) => void }) {
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
  const open = (p: Panel) => {
    setDone(null);
    enable.reset();
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
          {isSelf && <span className="ml-1 text-xs text-zinc-500">(you)</span>}
        </Cell>
        <Cell label="Role">{u.role}</Cell>
        <Cell label="Unit patterns">{roleUnits(u)}</Cell>
        <Cell label="State">
          {u.disabled ? (
            <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-semibold text-red-900 dark:bg-red-950 dark:text-red-200">disabled</span>
          ) : (
            <span className="rounded bg-emerald-100 px-1.5 py-0.5 text-xs font-semibold text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200">
              enabled
            </span>
          )}
          {!u.hasPassword && <span className="block text-xs text-zinc-500">no password (proxy sign-in only)</span>}
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
            <p className="mt-1 text-xs text-zinc-500">
              Your own account: another admin disables it; change your password on the{" "}
              <Link href="/account" className="text-blue-700 underline dark:text-blue-400">
                account page
              </Link>
              .
            </p>
          )}
        </td>
      </tr>
      {(panel || done || enable.error) && (
        <tr className="block sm:table-row">
          <td colSpan={6} className="block px-3 pb-3 sm:table-cell">
            <div className="space-y-3">
              {done && <OkNote>{done}</OkNote>}
              {enable.error && <ErrorNote>{enable.error.message}</ErrorNote>}
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

const panelClass = "space-y-3 rounded-md border border-zinc-200 bg-zinc-50 p-3 dark:border-zinc-800 dark:bg-zinc-900";

function EditPanel({ user: u, isSelf, onDone, onCancel }: { user: PanelUser; isSelf: boolean; onDone: (m: string) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const [role, setRole] = useState<Role>(u.role);
  const [patterns, setPatterns] = useState(u.unitPatterns.join(", "));
  const update = useMutation(
    trpc.users.update.mutationOptions({
      onSuccess: (user) => onDone(`Saved ${user.name}: ${user.role}${user.role === "operator" ? ` for ${user.unitPatterns.join(", ") || "no units"}` : ""}.`),
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

function PasswordPanel({ user: u, onDone, onCancel }: { user: PanelUser; onDone: (m: string) => void; onCancel: () => void }) {
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

function DisablePanel({ user: u, onDone, onCancel }: { user: PanelUser; onDone: (m: string) => void; onCancel: () => void }) {
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
