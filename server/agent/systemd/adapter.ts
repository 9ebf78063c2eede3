/**
 * The real SystemdAdapter: org.freedesktop.systemd1 over the system bus (dbus-next).
 *
 * Shape (one module per concern):
 * - connection.ts: the bus connection, systemd's bus name, reconnect with backoff, status. Every
 *   incoming signal, and every full re-read, runs as one task on a single queue (taskQueue.ts),
 *   in arrival order; what tasks emit therefore comes out in systemd's order.
 * - signals.ts routes systemd's signals to unitTracker.ts (units: LoadUnit + Ref + GetAll,
 *   PropertiesChanged, transitions at systemd's timestamps; discovery.ts says which units) and
 *   jobTracker.ts (JobNew/JobRemoved and jobs that ended unseen).
 * - Signals carry their arrival position (`seq`); a reply (GetAll) carries its own. A signal
 *   that arrived before the reply that already covered it is skipped, so a re-read is never
 *   overwritten by older news.
 * - Calls from the agent: actions.ts (Start/Stop/Restart/ResetFailed/KillUnit), unitProcesses.ts
 *   (the detail page's processes from /proc), dependencyStates.ts (read-only states of
 *   dependencies), journal.ts (journalctl). unitGuard.ts refuses other units first.
 */
import type { BackendStatus, JournalEntry, UnitAction, UnitDetail, UnitStateReading, UnitSummary, UnitTransition } from "../../contract/types";
import type { ProcAdapter, SystemdAdapter, SystemdEvent } from "../adapter";
import { queueUnitAction } from "./actions";
import { SYSTEM_BUS_DEFAULT, type BusConnection } from "./bus";
import { detectCgroupRoot } from "./cgroups";
import { SystemdLink } from "./connection";
import { environmentValues, jsonSafe, str, type PlainProps } from "./dbusValues";
import { readDependencyStates } from "./dependencyStates";
import { JobTracker } from "./jobTracker";
import { followJournal, JOURNAL_MAX_LINES, readJournal, type JournalSource } from "./journal";
import { searchUnitJournal, type JournalRead, type JournalSearchQuery, type SearchOptions } from "./journalSearch";
import { unitFileFromProps } from "./unitFile";
import type { UnitFile } from "../../contract/journalSearch";
import { handleSystemdSignal } from "./signals";
import { SystemdCalls } from "./systemdCalls";
import { assertManageableUnit, isUnitInstance } from "./unitGuard";
import { UnitProcessReader } from "./unitProcesses";
import { detailFromProps, summaryFromProps } from "./unitProps";
import { UnitTracker } from "./unitTracker";

export interface SystemdAdapterOptions {
  /** GPUDECK_UNITS: only units matching these are read, shown or acted on */
  unitGlobs: string[];
  /** default: DBUS_SYSTEM_BUS_ADDRESS, else the standard system bus socket */
  busAddress?: string;
  log?: (msg: string) => void;
  /** /proc reader for control/main/cgroup processes (default: the real /proc) */
  procs?: ProcAdapter;
  /** journalctl binary and journal directory */
  journal?: JournalSource;
  /** cgroup hierarchy root systemd's ControlGroup paths are relative to (default: detected) */
  cgroupRoot?: string | null;
  /** backoff between reconnects; identical failure lines are logged at most every quietLogMs (default 60 s) */
  reconnect?: { initialMs?: number; maxMs?: number; quietLogMs?: number };
  callTimeoutMs?: number;
  /** how often a quiet connection is checked for life */
  healthCheckMs?: number;
}

export class DbusSystemdAdapter implements SystemdAdapter {
  private readonly globs: string[];
  private readonly log: (msg: string) => void;
  private readonly journalSource: JournalSource;
  private readonly calls: SystemdCalls;
  private readonly processes: UnitProcessReader;
  private readonly jobs: JobTracker;
  private readonly units: UnitTracker;
  private readonly link: SystemdLink;
  private onEvent: (e: SystemdEvent) => void = () => {};
  private readonly followers = new Set<AbortController>();

  constructor(opts: SystemdAdapterOptions, procs: ProcAdapter | null) {
    this.globs = [...opts.unitGlobs];
    this.log = opts.log ?? (() => {});
    this.journalSource = opts.journal ?? {};
    this.calls = new SystemdCalls(opts.callTimeoutMs ?? 10_000);
    this.processes = new UnitProcessReader(procs, opts.cgroupRoot === undefined ? detectCgroupRoot() : opts.cgroupRoot);
    const emit = (e: SystemdEvent) => this.emit(e);
    this.jobs = new JobTracker(this.calls, this.journalSource, emit);
    this.units = new UnitTracker({ calls: this.calls, jobs: this.jobs, globs: this.globs, emit, log: this.log });
    this.link = new SystemdLink(
      {
        address: opts.busAddress || process.env.DBUS_SYSTEM_BUS_ADDRESS || SYSTEM_BUS_DEFAULT,
        calls: this.calls,
        log: this.log,
        initialBackoffMs: opts.reconnect?.initialMs ?? 100,
        maxBackoffMs: opts.reconnect?.maxMs ?? 5000,
        quietLogMs: opts.reconnect?.quietLogMs,
        healthCheckMs: opts.healthCheckMs ?? 30_000,
      },
      {
        emit,
        refreshAll: (conn, o) => this.units.refreshAll(conn, o),
        onSystemdSignal: (conn, m) => handleSystemdSignal(conn, m, this.units, this.jobs),
      },
    );
  }

  async start(onEvent: (e: SystemdEvent) => void): Promise<void> {
    this.onEvent = onEvent;
    await this.link.open();
  }

  async close(): Promise<void> {
    for (const f of this.followers) f.abort();
    await this.link.close();
  }

  status(): BackendStatus {
    return this.link.status();
  }

  list(): UnitSummary[] {
    return this.units.list();
  }

  transitionsSince(name: string, last: UnitTransition): UnitTransition[] {
    return this.units.transitionsSince(name, last);
  }

  async get(name: string): Promise<UnitDetail | null> {
    assertManageableUnit(name, this.globs);
    let props: PlainProps | null = null;
    if (this.link.conn && this.link.systemdOwner) {
      const path = await this.pathWithoutCreating(this.link.conn, name);
      if (path === null) return null;
      props = await this.calls.getAll(this.link.conn, path);
    } else {
      // keep serving while systemd is unreachable: the last properties we read
      props = this.units.get(name)?.props ?? null;
      if (!props) throw new Error(`systemd is unreachable (${this.link.status().message}) and ${name} was never read`);
    }
    const summary = summaryFromProps(name, props, this.jobs.typeOf);
    const facts = await this.processes.read(summary, str(props.ControlGroup));
    return detailFromProps(name, props, this.jobs.typeOf, facts);
  }

  async readStates(names: string[]): Promise<UnitStateReading[]> {
    const conn = this.link.systemdOwner ? this.link.conn : null;
    return readDependencyStates(names, conn, this.calls, this.units, this.log);
  }

  async act(name: string, action: UnitAction): Promise<{ jobId: number | null }> {
    assertManageableUnit(name, this.globs);
    const conn = this.link.conn;
    if (!conn || !this.link.systemdOwner) throw new Error(`systemd is unreachable: ${this.link.status().message}`);
    return queueUnitAction(conn, this.calls, this.jobs, name, action);
  }

  async journal(name: string, lines: number): Promise<JournalEntry[]> {
    assertManageableUnit(name, this.globs);
    return readJournal({ ...this.journalSource, unit: name, lines });
  }

  /** units.journal with filters, the histogram and downloads (./journalSearch.ts: bounded by `opts.bounds`). */
  async searchJournal(q: JournalSearchQuery, opts: SearchOptions): Promise<JournalRead> {
    assertManageableUnit(q.unit, this.globs);
    return searchUnitJournal(this.journalSource, q, opts);
  }

  /** units.file: FragmentPath, DropInPaths, NeedDaemonReload and the files on disk (./unitFile.ts). */
  async readUnitFile(name: string): Promise<UnitFile | null> {
    assertManageableUnit(name, this.globs);
    const conn = this.link.conn;
    if (!conn || !this.link.systemdOwner) throw new Error(`systemd is unreachable: ${this.link.status().message}`);
    const path = await this.pathWithoutCreating(conn, name);
    if (path === null) return null;
    return unitFileFromProps(await this.calls.getAll(conn, path));
  }

  /** Live journal; `opts.afterCursor` continues exactly after a backlog read with journal(). */
  async *followJournal(name: string, signal: AbortSignal, opts: { afterCursor?: string; lines?: number } = {}): AsyncGenerator<JournalEntry> {
    assertManageableUnit(name, this.globs);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) ctl.abort();
    this.followers.add(ctl);
    try {
      // after a cursor, --lines caps how many missed lines come before the live ones
      const lines = opts.lines ?? (opts.afterCursor ? JOURNAL_MAX_LINES : 0);
      yield* followJournal({ ...this.journalSource, unit: name, lines, afterCursor: opts.afterCursor, signal: ctl.signal });
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.followers.delete(ctl);
    }
  }

  /** The readiness reader: one journalctl over several units (each allow-listed), not per viewer. */
  async *followUnitsJournal(names: string[], signal: AbortSignal, opts: { afterCursor?: string } = {}): AsyncGenerator<JournalEntry> {
    if (names.length === 0) return;
    for (const name of names) assertManageableUnit(name, this.globs);
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) ctl.abort();
    this.followers.add(ctl);
    try {
      const lines = opts.afterCursor ? JOURNAL_MAX_LINES : 0;
      yield* followJournal({ ...this.journalSource, unit: names[0]!, alsoUnits: names.slice(1), lines, afterCursor: opts.afterCursor, signal: ctl.signal });
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.followers.delete(ctl);
    }
  }

  /** Only the asked-for keys of Environment= (it may hold secrets: nothing else leaves here). */
  async readEnvironment(name: string, keys: readonly string[]): Promise<Record<string, string>> {
    assertManageableUnit(name, this.globs);
    let props = this.units.get(name)?.props ?? null;
    if (this.link.conn && this.link.systemdOwner && !props) {
      const path = await this.pathWithoutCreating(this.link.conn, name);
      if (path !== null) props = await this.calls.getAll(this.link.conn, path);
    }
    return environmentValues(props?.Environment, keys);
  }

  /**
   * A unit's object path for reading it, or null when there is no such unit. Looking at a name
   * nobody started must not create it: LoadUnit would, and tracking it (UnitNew, Ref) would list
   * it, loaded, for everyone; so a unit systemd has not loaded is loaded only when its unit file
   * exists (GetUnitFileState does not load), and an instance of a template never (its `%i` is
   * whatever the caller wrote).
   */
  private async pathWithoutCreating(conn: BusConnection, name: string): Promise<string | null> {
    const known = this.units.get(name)?.path;
    if (known) return known;
    const loaded = await this.calls.unitPathIfLoaded(conn, name);
    if (loaded !== null || isUnitInstance(name)) return loaded;
    return (await this.calls.unitFileExists(conn, name)) ? this.calls.loadUnit(conn, name) : null;
  }

  /** A consumer that throws must not break the adapter's task queue: log it and go on. */
  private emit(e: SystemdEvent): void {
    try {
      this.onEvent(e);
    } catch (err) {
      this.log(`systemd: event consumer failed on ${e.type}: ${(err as Error).message} ${jsonSafe(e).slice(0, 200)}`);
    }
  }
}
