/**
 * Hosts that admins added on the Hosts page, in the panel database (`hosts` table). The token is
 * stored encrypted with the panel's secret key (../../store/secretBox.ts; the panel must send it,
 * so it is sealed, not hashed); it is never returned by a procedure or logged: reads give a hint
 * ("…f3a9") at most. A host may carry a CA (PEM) or a pinned fingerprint for https, and
 * `insecure_http` for plain http to an agent off loopback.
 *
 * Every change publishes a `hosts` panel event in the same transaction: each replica then re-reads
 * the table and brings its fleet (one stream per agent) in line (`syncStoredHosts`).
 */
import type { Selectable } from "kysely";
import type { Store } from "../../store/database";
import { hostTokenContext } from "../../store/migrations/004_secrets";
import type { SecretBox } from "../../store/secretBox";
import { NO_NOTIFIER, publishEvent, type EventNotifier } from "../../store/events";
import type { StoreSource } from "../../store/lazyStore";
import type { HostsTable } from "../../store/schema";
import type { HostConfig } from "./hostsConfig";

type HostRow = Selectable<HostsTable>;

export interface StoredHost extends HostConfig {
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
}

export class HostStore {
  constructor(
    private readonly source: StoreSource,
    private readonly clock: () => number = Date.now,
    private readonly events: EventNotifier = NO_NOTIFIER,
  ) {}

  async list(): Promise<StoredHost[]> {
    const { db, secrets } = await this.source.get();
    return (await db.selectFrom("hosts").selectAll().orderBy("name").execute()).map((r) => toHost(r, secrets));
  }

  async get(name: string): Promise<StoredHost | null> {
    const { db, secrets } = await this.source.get();
    const row = await db.selectFrom("hosts").selectAll().where("name", "=", name).executeTakeFirst();
    return row ? toHost(row, secrets) : null;
  }

  /** A write and its `hosts` event, in one transaction. */
  private async change<T>(name: string, fn: (tx: Store["db"], secrets: SecretBox) => Promise<T>): Promise<T> {
    const store = await this.source.get();
    const result = await store.write(async (tx) => {
      const r = await fn(tx, store.secrets);
      await publishEvent(tx, store.dialect, "hosts", { name }, this.clock());
      return r;
    });
    this.events.poke();
    return result;
  }

  async add(host: StoredHostInput, by: string | null): Promise<StoredHost> {
    const now = this.clock();
    let secrets: SecretBox | null = null;
    const row = await this.change(host.name, (tx, box) => {
      secrets = box;
      return tx
        .insertInto("hosts")
        .values({
          name: host.name,
          url: host.url,
          token: box.seal(host.token, hostTokenContext(host.name)),
          ...tlsColumns(host),
          created_at: now,
          created_by: by,
          updated_at: now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return toHost(row, secrets!);
  }

  /** Changes what is given (null clears a CA or fingerprint); null when there is no such host. */
  async update(name: string, change: Partial<Omit<StoredHostInput, "name">>): Promise<StoredHost | null> {
    let secrets: SecretBox | null = null;
    const row = await this.change(name, (tx, box) => {
      secrets = box;
      const set = {
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.token !== undefined ? { token: box.seal(change.token, hostTokenContext(name)) } : {}),
        ...tlsColumns(change),
        updated_at: this.clock(),
      };
      return tx.updateTable("hosts").set(set).where("name", "=", name).returningAll().executeTakeFirst();
    });
    return row ? toHost(row, secrets!) : null;
  }

  async remove(name: string): Promise<boolean> {
    const gone = await this.change(name, (tx) => tx.deleteFrom("hosts").where("name", "=", name).executeTakeFirst());
    return Number(gone.numDeletedRows) > 0;
  }
}

/** What hosts.add stores: the token in plain text here, sealed in the table. */
export interface StoredHostInput {
  name: string;
  url: string;
  token: string;
  caPem?: string | null;
  fingerprint?: string | null;
  insecureHttp?: boolean;
}

function tlsColumns(h: Partial<StoredHostInput>) {
  return {
    ...(h.caPem !== undefined ? { ca_pem: h.caPem } : {}),
    ...(h.fingerprint !== undefined ? { fingerprint: h.fingerprint } : {}),
    ...(h.insecureHttp !== undefined ? { insecure_http: h.insecureHttp ? 1 : 0 } : {}),
  };
}

function toHost(row: HostRow, secrets: SecretBox): StoredHost {
  return {
    name: row.name,
    url: row.url,
    token: secrets.open(row.token, hostTokenContext(row.name)),
    tls: row.ca_pem || row.fingerprint ? { ca: row.ca_pem, fingerprint: row.fingerprint } : null,
    insecureHttp: row.insecure_http === 1,
    tokenSource: "the token stored for this host on the Hosts page",
    source: "panel",
    createdAt: row.created_at,
    createdBy: row.created_by,
    updatedAt: row.updated_at,
  };
}

/** "…f3a9": enough to tell two tokens apart, never enough to use one. */
export function tokenHint(token: string | null): string | null {
  if (!token) return null;
  return token.length >= 12 ? `…${token.slice(-4)}` : "…";
}

/** A new address, token, CA, pin or plain-http choice starts a host's stream afresh. */
function hostChanged(a: HostConfig, b: HostConfig): boolean {
  return (
    a.url !== b.url ||
    a.token !== b.token ||
    (a.tls?.ca ?? null) !== (b.tls?.ca ?? null) ||
    (a.tls?.fingerprint ?? null) !== (b.tls?.fingerprint ?? null) ||
    Boolean(a.insecureHttp) !== Boolean(b.insecureHttp)
  );
}

/** What syncStoredHosts changes: a fleet's links (the fleet hub, ./fleet.ts). */
export interface HostLinks {
  get(name: string): { config: HostConfig } | undefined;
  all(): { name: string; config: HostConfig }[];
  put(config: HostConfig): unknown;
  remove(name: string): boolean;
}

/**
 * Bring a fleet in line with the hosts table (after a `hosts` event from any replica, and at
 * start): stored hosts missing here are added, changed ones replaced (a new address or token
 * starts their stream afresh), and hosts of the Hosts page no longer stored are removed. Hosts
 * from the agents file or the environment win over a stored host of the same name.
 */
export function syncStoredHosts(fleet: HostLinks, stored: readonly StoredHost[]): { added: string[]; changed: string[]; removed: string[] } {
  const out = { added: [] as string[], changed: [] as string[], removed: [] as string[] };
  const names = new Set(stored.map((h) => h.name));
  for (const host of stored) {
    const link = fleet.get(host.name);
    if (!link) {
      fleet.put(host);
      out.added.push(host.name);
    } else if (link.config.source === "panel" && hostChanged(link.config, host)) {
      fleet.put(host);
      out.changed.push(host.name);
    }
  }
  for (const link of fleet.all()) {
    if (link.config.source === "panel" && !names.has(link.name)) {
      fleet.remove(link.name);
      out.removed.push(link.name);
    }
  }
  return out;
}
