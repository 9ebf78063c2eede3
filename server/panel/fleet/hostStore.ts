/**
 * Hosts that admins added on the Hosts page, in the panel database (`hosts` table). The token is
 * stored as the agent needs it (the panel must send it), in a file only the panel's user can
 * read; it is never returned by a procedure or logged: reads give a hint ("…f3a9") at most.
 */
import type { PanelDb } from "../../auth/db";
import type { HostConfig } from "./hostsConfig";

interface HostRow {
  name: string;
  url: string;
  token: string;
  created_at: number;
  created_by: string | null;
  updated_at: number;
}

export interface StoredHost extends HostConfig {
  createdAt: number;
  createdBy: string | null;
  updatedAt: number;
}

export class HostStore {
  constructor(
    private readonly db: PanelDb,
    private readonly clock: () => number = Date.now,
  ) {}

  list(): StoredHost[] {
    return (this.db.prepare("SELECT * FROM hosts ORDER BY name").all() as HostRow[]).map(toHost);
  }

  get(name: string): StoredHost | null {
    const row = this.db.prepare("SELECT * FROM hosts WHERE name = ?").get(name) as HostRow | undefined;
    return row ? toHost(row) : null;
  }

  add(host: { name: string; url: string; token: string }, by: string | null): StoredHost {
    const now = this.clock();
    this.db
      .prepare("INSERT INTO hosts (name, url, token, created_at, created_by, updated_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(host.name, host.url, host.token, now, by, now);
    return this.get(host.name)!;
  }

  /** Changes url and/or token; null when there is no such host. */
  update(name: string, change: { url?: string; token?: string }): StoredHost | null {
    const before = this.get(name);
    if (!before) return null;
    this.db
      .prepare("UPDATE hosts SET url = ?, token = ?, updated_at = ? WHERE name = ?")
      .run(change.url ?? before.url, change.token ?? before.token, this.clock(), name);
    return this.get(name);
  }

  remove(name: string): boolean {
    return this.db.prepare("DELETE FROM hosts WHERE name = ?").run(name).changes > 0;
  }
}

function toHost(row: HostRow): StoredHost {
  return {
    name: row.name,
    url: row.url,
    token: row.token,
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
