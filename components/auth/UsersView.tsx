"use client";
/**
 * Admins manage panel users: add, change role and unit patterns, disable/enable, reset a
 * password. The server decides (admin only, no self-lockout, never the last admin) and audits;
 * this page shows its answers in plain words and keeps whatever the admin typed when a change is
 * refused. The parts are under ./users/.
 */
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";
import { AddUserForm } from "./users/AddUserForm";
import { UsersTable } from "./users/UsersTable";

/** The page: admins get the user list; anyone else a plain sentence. */
export function UsersView() {
  const trpc = useTRPC();
  const me = useQuery(trpc.session.me.queryOptions());
  const user = me.data?.user;
  if (me.isPending) return <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>;
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
  return (
    <div className="space-y-6">
      <div className="flex flex-wrap items-baseline gap-3">
        <h1 className="text-xl font-semibold">Users</h1>
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Who may sign in, and what they may do. Every change is in the audit log.</p>
      </div>

      <AddUserForm />

      <UsersTable users={users.data} error={users.error} self={self} />
    </div>
  );
}
