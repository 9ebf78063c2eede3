/**
 * The adapter's link to systemd and its lifecycle: the bus connection, systemd's current bus
 * name, the task queue every signal runs on, and the status the agent reports.
 *
 * - Bus gone (dbus restarted, or the bus stops answering the health check) → status
 *   "unreachable", reconnect with backoff, re-read everything (hooks.refreshAll emits what
 *   changed meanwhile from systemd's timestamps).
 * - systemd gone from the bus (daemon-reexec) → the same, on the live connection, driven by
 *   NameOwnerChanged.
 * - A failed task (e.g. a call timed out) may leave stale state: everything is re-read a second later.
 */
import type { BackendStatus } from "../../contract/types";
import type { SystemdEvent } from "../adapter";
import { quietLog, type QuietLog } from "../quietLog";
import { BusConnection, BusError, type SignalMessage } from "./bus";
import { str } from "./dbusValues";
import { MANAGER, RULE_JOBS, RULE_MANAGER, RULE_OWNER, SD, SD_PATH, type SystemdCalls } from "./systemdCalls";
import { GenerationQueue } from "./taskQueue";

export interface SystemdLinkOptions {
  address: string;
  calls: SystemdCalls;
  log: (msg: string) => void;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** identical reconnect failures are logged at most this often (default 60 s) */
  quietLogMs?: number;
  /** how often a quiet connection is checked for life */
  healthCheckMs: number;
}

export interface SystemdLinkHooks {
  emit: (e: SystemdEvent) => void;
  /** Re-read every unit on `conn`; `ref`: Ref them again (systemd is new on the bus). */
  refreshAll: (conn: BusConnection, opts: { ref: boolean }) => Promise<void>;
  /** A signal sent by systemd's current bus name. */
  onSystemdSignal: (conn: BusConnection, m: SignalMessage) => Promise<void>;
}

export class SystemdLink {
  private readonly retryLog: QuietLog;
  private connValue: BusConnection | null = null;
  /** bumps on every (re)connect; tasks of an older connection are dropped */
  private generation = 0;
  private owner: string | null = null;
  private readonly queue: GenerationQueue;
  private statusValue: BackendStatus;
  private closed = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private healthTimer: NodeJS.Timeout | null = null;
  private recoveryQueued = false;

  constructor(
    private readonly opts: SystemdLinkOptions,
    private readonly hooks: SystemdLinkHooks,
  ) {
    this.retryLog = quietLog(opts.log, { everyMs: opts.quietLogMs });
    this.backoffMs = opts.initialBackoffMs;
    this.statusValue = { state: "connecting", message: `connecting to ${opts.address}`, sinceMs: Date.now() };
    this.queue = new GenerationQueue(
      (gen) => !this.closed && gen === this.generation,
      (gen, err) => this.taskFailed(gen, err),
    );
  }

  /** The live connection, or null while there is none. */
  get conn(): BusConnection | null {
    return this.connValue;
  }

  /** systemd's unique bus name while it is on the bus, else null. */
  get systemdOwner(): string | null {
    return this.owner;
  }

  status(): BackendStatus {
    return this.statusValue;
  }

  /** Report "connecting", connect; resolves once the first full read is done or failed. */
  async open(): Promise<void> {
    this.hooks.emit({ type: "status", status: this.statusValue });
    await this.connect();
    this.healthTimer = setInterval(() => void this.healthCheck(), this.opts.healthCheckMs);
    this.healthTimer.unref();
  }

  /** Stop reconnecting, drop the connection and wait for the running task to end. */
  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.healthTimer) clearInterval(this.healthTimer);
    this.connValue?.close();
    this.connValue = null;
    await this.queue.idle();
  }

  private setStatus(state: BackendStatus["state"], message: string): void {
    if (this.statusValue.state === state && this.statusValue.message === message) return;
    const sinceMs = this.statusValue.state === state ? this.statusValue.sinceMs : Date.now();
    this.statusValue = { state, message, sinceMs };
    this.hooks.emit({ type: "status", status: this.statusValue });
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const gen = ++this.generation;
    this.owner = null;
    this.recoveryQueued = false;
    let conn: BusConnection;
    try {
      conn = await BusConnection.open(this.opts.address, Math.min(this.opts.calls.timeoutMs, 5000));
    } catch (err) {
      this.lost(gen, (err as Error).message);
      return;
    }
    if (this.closed || gen !== this.generation) {
      conn.close();
      return;
    }
    this.connValue = conn;
    conn.onSignal((m) => this.queue.enqueue(gen, () => this.onSignal(conn, m)));
    conn.onClose((reason) => this.lost(gen, reason));
    try {
      for (const rule of [RULE_OWNER, RULE_MANAGER, RULE_JOBS]) await conn.addMatch(rule);
      const owner = await this.nameOwner(conn);
      if (!owner) {
        this.setStatus("connecting", "connected to the system bus; waiting for systemd to appear on it");
        return; // NameOwnerChanged brings us on
      }
      await this.queue.enqueueAndWait(gen, () => this.attach(conn, owner, true));
    } catch (err) {
      if (gen === this.generation && !conn.closed) {
        this.opts.log(`systemd: setting up the connection failed: ${(err as Error).message}`);
        conn.close();
        this.lost(gen, (err as Error).message);
      }
    }
  }

  private lost(gen: number, reason: string): void {
    if (this.closed || gen !== this.generation) return;
    this.generation++; // drop queued work of the dead connection
    this.connValue?.close();
    this.connValue = null;
    this.owner = null;
    this.setStatus("unreachable", `lost the system bus (${reason}); reconnecting`);
    this.retryLog.repeat(reason, `systemd: ${reason}; reconnecting in ${this.backoffMs} ms`);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.opts.maxBackoffMs, this.backoffMs * 2);
  }

  private async healthCheck(): Promise<void> {
    const conn = this.connValue;
    if (!conn || conn.closed) return;
    try {
      await conn.call({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId" });
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "gpudeck.Timeout" && conn === this.connValue) {
        conn.close();
        this.lost(this.generation, "the bus stopped answering");
      }
    }
  }

  private async nameOwner(conn: BusConnection): Promise<string | null> {
    try {
      const [owner] = await conn.call(
        {
          destination: "org.freedesktop.DBus",
          path: "/org/freedesktop/DBus",
          interface: "org.freedesktop.DBus",
          member: "GetNameOwner",
          signature: "s",
          body: [SD],
        },
        this.opts.calls.timeoutMs,
      );
      return str(owner) || null;
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "org.freedesktop.DBus.Error.NameHasNoOwner") return null;
      throw err;
    }
  }

  /** systemd is (again) on the bus as `owner`: subscribe, re-read everything, report what changed. */
  private async attach(conn: BusConnection, owner: string, ref: boolean): Promise<void> {
    this.owner = owner;
    try {
      await this.opts.calls.call(conn, { path: SD_PATH, interface: MANAGER, member: "Subscribe" });
    } catch (err) {
      // after daemon-reexec systemd may remember our subscription
      if (!(err instanceof BusError && err.dbusName === "org.freedesktop.systemd1.AlreadySubscribed")) throw err;
    }
    await this.hooks.refreshAll(conn, { ref });
    this.backoffMs = this.opts.initialBackoffMs;
    this.retryLog.recovered(`systemd: connected (${this.opts.address})`);
    this.setStatus("ok", `connected to systemd (${this.opts.address})`);
  }

  private async onSignal(conn: BusConnection, m: SignalMessage): Promise<void> {
    if (m.interface === "org.freedesktop.DBus" && m.member === "NameOwnerChanged") {
      if (m.sender !== "org.freedesktop.DBus" || m.body[0] !== SD) return;
      const newOwner = str(m.body[2]);
      if (!newOwner) {
        this.owner = null;
        this.setStatus("unreachable", "systemd left the bus (re-executing or restarting); waiting for it");
      } else if (newOwner !== this.owner) {
        this.opts.log(`systemd: now on the bus as ${newOwner}; re-reading all units`);
        await this.attach(conn, newOwner, true);
      }
      return;
    }
    if (!this.owner || m.sender !== this.owner) return;
    await this.hooks.onSystemdSignal(conn, m);
  }

  private taskFailed(gen: number, err: unknown): void {
    if (err instanceof BusError && err.dbusName === "gpudeck.Disconnected") return; // lost() handles it
    this.opts.log(`systemd: ${(err as Error).message}; re-reading all units`);
    this.queueRecovery(gen);
  }

  /** After a failed task (e.g. a call timed out) what we hold may be stale: re-read, a second later. */
  private queueRecovery(gen: number): void {
    const conn = this.connValue;
    if (this.recoveryQueued || !conn) return;
    this.recoveryQueued = true;
    const timer = setTimeout(() => {
      if (gen !== this.generation) {
        this.recoveryQueued = false; // a reconnect re-reads everything anyway
        return;
      }
      void this.queue.enqueue(gen, async () => {
        this.recoveryQueued = false;
        if (this.owner) await this.hooks.refreshAll(conn, { ref: false });
      });
    }, 1000);
    timer.unref();
  }
}
