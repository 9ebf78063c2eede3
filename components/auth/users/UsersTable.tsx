"use client";
/** The accounts: a table on wide screens, one card per user on a phone; one user's panel open at a time. */
import { useState } from "react";
import type { PanelUser } from "@/server/contract/users";
import { ErrorNote } from "./notes";
import type { Panel } from "./panels";
import { UserRow } from "./UserRow";
import { isSameUser } from "./userText";

const COLUMNS = ["User", "Role", "Unit patterns", "State", "Last sign-in", "Actions"];

export function UsersTable({ users, error, self }: { users: PanelUser[] | undefined; error: { message: string } | null; self: string }) {
  const [open, setOpen] = useState<{ name: string; panel: Panel } | null>(null);
  const list = users ?? [];
  return (
    <section aria-labelledby="users-heading" className="space-y-2">
      <h2 id="users-heading" className="text-base font-semibold">
        Accounts{users ? ` (${list.length})` : ""}
      </h2>
      {error ? (
        <ErrorNote testId="users-error">{error.message}</ErrorNote>
      ) : !users ? (
        <p className="text-sm text-zinc-500 dark:text-zinc-400">Loading…</p>
      ) : (
        <div className="rounded-lg border border-zinc-200 sm:overflow-x-auto dark:border-zinc-800">
          <table className="block w-full text-left text-sm sm:table" data-testid="users-table">
            <thead className="hidden bg-zinc-50 text-xs text-zinc-600 sm:table-header-group dark:bg-zinc-900 dark:text-zinc-400">
              <tr>
                {COLUMNS.map((h) => (
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
                isSelf={isSameUser(u.name, self)}
                panel={open?.name === u.name ? open.panel : null}
                setPanel={(panel) => setOpen(panel ? { name: u.name, panel } : null)}
              />
            ))}
          </table>
        </div>
      )}
    </section>
  );
}
