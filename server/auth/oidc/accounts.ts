/**
 * The gpudeck account behind a person signed in by the identity provider: found by the provider's
 * `sub`, created on first sign-in (source "oidc", no local password), and given the role and units
 * of their groups at every sign-in (a change makes their open streams re-check). A disabled account stays out; a local account of the same name
 * is never taken over. Runs under the users lock (one at a time across replicas, like every user
 * change that checks before it writes).
 */
import type { Selectable } from "kysely";
import type { OidcRefusal } from "../../contract/oidc";
import { publishEvent } from "../../store/events";
import type { StoreSource } from "../../store/lazyStore";
import type { UsersTable } from "../../store/schema";
import type { Clock } from "../types";
import type { User } from "../types";
import { countEnabledAdmins, toUser, USERS_LOCK } from "../userFields";
import type { OidcRoleMapping } from "./config";

export interface RoleChange {
  from: { role: string; units: string[] };
  to: { role: string; units: string[] };
}

export type AccountResult = { ok: true; user: User; created: boolean; change: RoleChange | null } | { ok: false; reason: OidcRefusal; user: User | null };

type Row = Selectable<UsersTable>;

const samePatterns = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((p, i) => p === b[i]);

export async function accountForSignIn(
  source: StoreSource,
  clock: Clock,
  input: { subject: string; username: string; mapping: OidcRoleMapping },
): Promise<AccountResult> {
  const store = await source.get();
  const { subject, username, mapping } = input;
  return store.write(
    async (tx): Promise<AccountResult> => {
      let row: Row | undefined = await tx.selectFrom("users").selectAll().where("oidc_subject", "=", subject).executeTakeFirst();
      if (!row) {
        const sameName = await tx
          .selectFrom("users")
          .selectAll()
          .where((eb) => eb(eb.fn("lower", ["username"]), "=", username.toLowerCase()))
          .executeTakeFirst();
        if (sameName) return { ok: false, reason: "local-account", user: toUser(sameName) };
        row = await tx
          .insertInto("users")
          .values({
            username,
            password_hash: null,
            role: mapping.role,
            unit_patterns: JSON.stringify(mapping.units),
            disabled: 0,
            created_at: clock(),
            password_changed_at: null,
            source: "oidc",
            oidc_subject: subject,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return { ok: true, user: toUser(row), created: true, change: null };
      }
      const before = toUser(row);
      if (before.disabled) return { ok: false, reason: "disabled", user: before };
      if (before.role === mapping.role && samePatterns(before.unitPatterns, mapping.units)) return { ok: true, user: before, created: false, change: null };
      if (before.role === "admin" && mapping.role !== "admin" && (await countEnabledAdmins(tx)) <= 1) return { ok: false, reason: "last-admin", user: before };
      const after = await tx
        .updateTable("users")
        .set({ role: mapping.role, unit_patterns: JSON.stringify(mapping.units) })
        .where("id", "=", row.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      // their open streams (on every replica) re-check what they may still see, as for users.update
      await publishEvent(tx, store.dialect, "sessions", { userId: after.id, username: after.username }, clock());
      return {
        ok: true,
        user: toUser(after),
        created: false,
        change: { from: { role: before.role, units: before.unitPatterns }, to: { role: mapping.role, units: mapping.units } },
      };
    },
    { lock: USERS_LOCK },
  );
}
