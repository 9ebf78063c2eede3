/**
 * `/healthz` of the panel (served by ./serve.ts, no sign-in: load balancers and monitoring ask
 * it): whether this replica reaches its database, and whether it hears the other replicas (the
 * LISTEN connection on PostgreSQL; SQLite's in-process emitter is always up). 200 when both are
 * fine, 503 otherwise, so a load balancer stops sending people to a replica that would refuse
 * them. Nothing secret: no URL, no password, only the driver's reason.
 */
import { sql } from "kysely";
import type { PanelEventBus } from "../store/eventBus";
import type { Dialect } from "../store/database";
import type { StoreSource } from "../store/lazyStore";
import { unreachableReason } from "../store/unavailable";

export interface PanelHealth {
  ok: boolean;
  database: { dialect: Dialect; ok: boolean; error?: string };
  listen: { ok: boolean; since: string; error?: string };
}

/** A database check that does not answer within this is a failed one. */
export const HEALTH_TIMEOUT_MS = 2000;

export async function panelHealth(store: StoreSource, events: Pick<PanelEventBus, "listenStatus">, timeoutMs = HEALTH_TIMEOUT_MS): Promise<PanelHealth> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const database = await Promise.race([
    (async () => {
      const { db } = await store.get();
      await sql`select 1`.execute(db);
      return { dialect: store.dialect, ok: true };
    })(),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs))),
  ])
    .catch((err: unknown) => ({ dialect: store.dialect, ok: false, error: unreachableReason(err) }))
    .finally(() => clearTimeout(timer));
  const l = events.listenStatus();
  const listen = { ok: l.ok, since: new Date(l.since).toISOString(), ...(l.error ? { error: l.error } : {}) };
  return { ok: database.ok && listen.ok, database, listen };
}
