/**
 * The real SystemdAdapter: org.freedesktop.systemd1 over the system bus (dbus-next).
 *
 * Shape:
 * - Every incoming signal, and every full re-read, runs as one task on a single queue, in
 *   arrival order. Tasks may await bus calls (a unit's properties, a job's type); what they
 *   emit therefore comes out in systemd's order.
 * - Signals carry their arrival position (`seq`); a reply (GetAll) carries its own. A signal
 *   that arrived before the reply that already covered it is skipped, so a re-read is never
 *   overwritten by older news.
 * - Units matching the globs are LoadUnit'ed and Ref'ed (systemd would otherwise garbage-collect
 *   inactive ones and stop sending their signals; the refs go away with our connection).
 * - Bus gone (dbus restarted) → status "unreachable", reconnect with backoff, re-read, and
 *   emit what changed meanwhile from systemd's timestamps. systemd gone from the bus
 *   (daemon-reexec) → the same, on the live connection, driven by NameOwnerChanged.
 */
import { quietLog, type QuietLog } from "../quietLog";
import type {
  BackendStatus,
  JobEvent,
  JournalEntry,
  ProcessInfo,
  UnitAction,
  UnitDetail,
  UnitStateReading,
  UnitSummary,
  UnitTransition,
} from "../../contract/types";
import type { ProcAdapter, SystemdAdapter, SystemdEvent } from "../adapter";
import { matchesUnitGlobs, unitNameProblem } from "../../contract/unitNames";
import { BusConnection, BusError, SYSTEM_BUS_DEFAULT, type CallRequest, type SignalMessage } from "./bus";
import { cgroupPids, detectCgroupRoot } from "./cgroups";
import { jobIdFromPath, jsonSafe, num, parseJobRef, str, unwrapProps, type PlainProps } from "./dbusValues";
import { findJobResult, followJournal, JOURNAL_MAX_LINES, readJournal, type JournalSource } from "./journal";
import { detailFromProps, snapshotFromProps, stateReadingFromProps, summaryFromProps, type UnitSnapshot } from "./unitProps";
import { firstObservation, liveTransition, reconcileTransitions } from "./transitions";

const SD = "org.freedesktop.systemd1";
const SD_PATH = "/org/freedesktop/systemd1";
const MANAGER = "org.freedesktop.systemd1.Manager";
const UNIT_IFACE = "org.freedesktop.systemd1.Unit";
const JOB_IFACE = "org.freedesktop.systemd1.Job";
const PROPS_IFACE = "org.freedesktop.DBus.Properties";
const JOB_PATH_PREFIX = "/org/freedesktop/systemd1/job/";
const SIGKILL = 9;
/** readStates() reads at most this many units per call: each is one bus round trip. */
export const MAX_STATE_READS = 64;

const RULE_OWNER = `type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='${SD}'`;
const RULE_MANAGER = `type='signal',sender='${SD}',interface='${MANAGER}',path='${SD_PATH}'`;
const RULE_JOBS = `type='signal',sender='${SD}',interface='${PROPS_IFACE}',member='PropertiesChanged',path_namespace='/org/freedesktop/systemd1/job'`;
const unitRule = (path: string) => `type='signal',sender='${SD}',interface='${PROPS_IFACE}',member='PropertiesChanged',path='${path}'`;

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

interface TrackedUnit {
  name: string;
  path: string;
  props: PlainProps;
  /** arrival position of the reply `props` was last fully read from */
  propsSeq: number;
  snapshot: UnitSnapshot;
  summary: UnitSummary;
  summaryJson: string;
  /** the connection our PropertiesChanged match rule for this unit lives on */
  matchedOn: BusConnection;
}

interface KnownJob {
  id: number;
  unit: string;
  type: string;
  running: boolean;
}

export class DbusSystemdAdapter implements SystemdAdapter {
  private readonly globs: string[];
  private readonly address: string;
  private readonly log: (msg: string) => void;
  private readonly retryLog: QuietLog;
  private readonly procs: ProcAdapter | null;
  private readonly journalSource: JournalSource;
  private readonly cgroupRoot: string | null;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly callTimeoutMs: number;
  private readonly healthCheckMs: number;

  private onEvent: (e: SystemdEvent) => void = () => {};
  private conn: BusConnection | null = null;
  /** bumps on every (re)connect; tasks of an older connection are dropped */
  private generation = 0;
  private systemdOwner: string | null = null;
  private queue: Promise<void> = Promise.resolve();
  private readonly units = new Map<string, TrackedUnit>();
  private readonly unitByPath = new Map<string, string>();
  private readonly jobs = new Map<number, KnownJob>();
  /** job id → type, for jobs we queued or looked up (bounded) */
  private readonly jobTypes = new Map<number, string>();
  private statusValue: BackendStatus;
  private closed = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private healthTimer: NodeJS.Timeout | null = null;
  private refWarned = false;
  private readonly followers = new Set<AbortController>();
  private recoveryQueued = false;

  constructor(opts: SystemdAdapterOptions, procs: ProcAdapter | null) {
    this.globs = [...opts.unitGlobs];
    this.address = opts.busAddress || process.env.DBUS_SYSTEM_BUS_ADDRESS || SYSTEM_BUS_DEFAULT;
    this.log = opts.log ?? (() => {});
    this.retryLog = quietLog(this.log, { everyMs: opts.reconnect?.quietLogMs });
    this.procs = procs;
    this.journalSource = opts.journal ?? {};
    this.cgroupRoot = opts.cgroupRoot === undefined ? detectCgroupRoot() : opts.cgroupRoot;
    this.initialBackoffMs = opts.reconnect?.initialMs ?? 100;
    this.maxBackoffMs = opts.reconnect?.maxMs ?? 5000;
    this.backoffMs = this.initialBackoffMs;
    this.callTimeoutMs = opts.callTimeoutMs ?? 10_000;
    this.healthCheckMs = opts.healthCheckMs ?? 30_000;
    this.statusValue = { state: "connecting", message: `connecting to ${this.address}`, sinceMs: Date.now() };
  }

  // --- SystemdAdapter --------------------------------------------------------------------

  async start(onEvent: (e: SystemdEvent) => void): Promise<void> {
    this.onEvent = onEvent;
    this.emit({ type: "status", status: this.statusValue });
    await this.connect();
    this.healthTimer = setInterval(() => void this.healthCheck(), this.healthCheckMs);
    this.healthTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.generation++;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.healthTimer) clearInterval(this.healthTimer);
    for (const f of this.followers) f.abort();
    this.conn?.close();
    this.conn = null;
    await this.queue.catch(() => undefined);
  }

  status(): BackendStatus {
    return this.statusValue;
  }

  list(): UnitSummary[] {
    return [...this.units.values()].map((u) => u.summary).sort((a, b) => a.name.localeCompare(b.name));
  }

  transitionsSince(name: string, last: UnitTransition): UnitTransition[] {
    const unit = this.units.get(name);
    if (!unit) return [];
    // What the earlier run last saw, as a snapshot: only boundaries crossed after it count.
    const prev: UnitSnapshot = {
      ...unit.snapshot,
      activeState: last.to.activeState,
      subState: last.to.subState,
      stateChangeUsec: last.atUsec,
      inactiveExitUsec: 0,
      activeEnterUsec: 0,
      activeExitUsec: 0,
      inactiveEnterUsec: 0,
      nRestarts: last.nRestarts,
      job: null,
    };
    // a unit restarted while the agent was away is back in the same state: the boundaries it
    // crossed in between still show the stop and the start
    return reconcileTransitions(prev, unit.snapshot);
  }

  async get(name: string): Promise<UnitDetail | null> {
    this.checkAllowed(name);
    let props: PlainProps | null = null;
    if (this.conn && this.systemdOwner) {
      const path = this.units.get(name)?.path ?? (await this.loadUnit(this.conn, name));
      props = unwrapProps((await this.sd(this.conn, { path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [""] }))[0]);
    } else {
      // keep serving while systemd is unreachable: the last properties we read
      props = this.units.get(name)?.props ?? null;
      if (!props) throw new Error(`systemd is unreachable (${this.statusValue.message}) and ${name} was never read`);
    }
    const jobType = (id: number) => this.jobTypes.get(id) ?? null;
    const summary = summaryFromProps(name, props, jobType);
    const [controlProcess, mainProcess, processes] = await Promise.all([
      this.inspect(summary.controlPid),
      this.inspect(summary.mainPid),
      this.cgroupProcesses(str(props.ControlGroup)),
    ]);
    return detailFromProps(name, props, jobType, { controlProcess, mainProcess, processes });
  }

  /**
   * State of units an allowed unit depends on, inside or outside the globs. Read-only by design:
   * GetUnit (never LoadUnit, so nothing is loaded that systemd had not loaded) and GetAll, and
   * only four properties come out; act(), get() and the journal still refuse these names.
   */
  async readStates(names: string[]): Promise<UnitStateReading[]> {
    const valid = names.filter((name) => typeof name === "string" && unitNameProblem(name) === null).slice(0, MAX_STATE_READS);
    const conn = this.conn;
    const readings = await Promise.all(
      valid.map(async (name): Promise<UnitStateReading | null> => {
        if (!conn || !this.systemdOwner) {
          // systemd unreachable: what we last read of units we track, nothing for the others
          const props = this.units.get(name)?.props;
          return props ? stateReadingFromProps(name, props) : null;
        }
        try {
          const path = this.units.get(name)?.path ?? (await this.unitPathIfLoaded(conn, name));
          if (path === null) return { name, loadState: "not-found", activeState: "inactive", subState: "dead", result: "" };
          const [all] = await this.sd(conn, { path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [""] });
          return stateReadingFromProps(name, unwrapProps(all));
        } catch (err) {
          this.log(`systemd: reading the state of ${name} failed: ${(err as Error).message}`);
          return null;
        }
      }),
    );
    return readings.filter((r): r is UnitStateReading => r !== null);
  }

  async act(name: string, action: UnitAction): Promise<{ jobId: number | null }> {
    this.checkAllowed(name);
    const conn = this.conn;
    if (!conn || !this.systemdOwner) throw new Error(`systemd is unreachable: ${this.statusValue.message}`);
    const call = (member: string, signature: string, body: unknown[]) =>
      this.sd(conn, { path: SD_PATH, interface: MANAGER, member, signature, body }).catch((err: unknown) => {
        throw new Error(`systemd refused ${action} of ${name}: ${(err as Error).message}`);
      });
    switch (action) {
      case "start":
      case "stop":
      case "restart": {
        const member = action === "start" ? "StartUnit" : action === "stop" ? "StopUnit" : "RestartUnit";
        const [jobPath] = await call(member, "ss", [name, "replace"]);
        const jobId = jobIdFromPath(str(jobPath));
        if (jobId !== null) this.rememberJobType(jobId, action);
        return { jobId };
      }
      case "reset-failed":
        await call("ResetFailedUnit", "s", [name]);
        return { jobId: null };
      case "kill":
        await call("KillUnit", "ssi", [name, "main", SIGKILL]);
        return { jobId: null };
      default:
        throw new Error(`unknown action ${JSON.stringify(action)}`);
    }
  }

  async journal(name: string, lines: number): Promise<JournalEntry[]> {
    this.checkAllowed(name);
    return readJournal({ ...this.journalSource, unit: name, lines });
  }

  /** Live journal; `opts.afterCursor` continues exactly after a backlog read with journal(). */
  async *followJournal(name: string, signal: AbortSignal, opts: { afterCursor?: string; lines?: number } = {}): AsyncGenerator<JournalEntry> {
    this.checkAllowed(name);
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

  // --- guards ----------------------------------------------------------------------------

  /** Refuses invalid or non-allowed names before anything touches D-Bus or journalctl. */
  private checkAllowed(name: string): void {
    if (typeof name !== "string") throw new Error("unit name must be a string");
    const problem = unitNameProblem(name);
    if (problem) throw new Error(`invalid unit name ${JSON.stringify(name.slice(0, 300))}: ${problem}`);
    if (!matchesUnitGlobs(name, this.globs)) {
      throw new Error(`unit ${name} is not among the units this agent may manage (GPUDECK_UNITS=${this.globs.join(",") || "<empty>"})`);
    }
  }

  private allowedName(name: string): boolean {
    return unitNameProblem(name) === null && matchesUnitGlobs(name, this.globs) && !/@\.[a-z]+$/.test(name);
  }

  // --- connection ------------------------------------------------------------------------

  private setStatus(state: BackendStatus["state"], message: string): void {
    if (this.statusValue.state === state && this.statusValue.message === message) return;
    const sinceMs = this.statusValue.state === state ? this.statusValue.sinceMs : Date.now();
    this.statusValue = { state, message, sinceMs };
    this.emit({ type: "status", status: this.statusValue });
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const gen = ++this.generation;
    this.systemdOwner = null;
    this.recoveryQueued = false;
    let conn: BusConnection;
    try {
      conn = await BusConnection.open(this.address, Math.min(this.callTimeoutMs, 5000));
    } catch (err) {
      this.lost(gen, (err as Error).message);
      return;
    }
    if (this.closed || gen !== this.generation) {
      conn.close();
      return;
    }
    this.conn = conn;
    conn.onSignal((m) => this.enqueue(gen, () => this.onSignal(conn, m)));
    conn.onClose((reason) => this.lost(gen, reason));
    try {
      for (const rule of [RULE_OWNER, RULE_MANAGER, RULE_JOBS]) await conn.addMatch(rule);
      const owner = await this.nameOwner(conn);
      if (!owner) {
        this.setStatus("connecting", "connected to the system bus; waiting for systemd to appear on it");
        return; // NameOwnerChanged brings us on
      }
      await this.enqueueAndWait(gen, () => this.attach(conn, owner, true));
    } catch (err) {
      if (gen === this.generation && !conn.closed) {
        this.log(`systemd: setting up the connection failed: ${(err as Error).message}`);
        conn.close();
        this.lost(gen, (err as Error).message);
      }
    }
  }

  private lost(gen: number, reason: string): void {
    if (this.closed || gen !== this.generation) return;
    this.generation++; // drop queued work of the dead connection
    this.conn?.close();
    this.conn = null;
    this.systemdOwner = null;
    this.setStatus("unreachable", `lost the system bus (${reason}); reconnecting`);
    this.retryLog.repeat(reason, `systemd: ${reason}; reconnecting in ${this.backoffMs} ms`);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, this.backoffMs);
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
  }

  private async healthCheck(): Promise<void> {
    const conn = this.conn;
    if (!conn || conn.closed) return;
    try {
      await conn.call({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId" });
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "gpudeck.Timeout" && conn === this.conn) {
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
        this.callTimeoutMs,
      );
      return str(owner) || null;
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "org.freedesktop.DBus.Error.NameHasNoOwner") return null;
      throw err;
    }
  }

  /** systemd is (again) on the bus as `owner`: subscribe, re-read everything, report what changed. */
  private async attach(conn: BusConnection, owner: string, ref: boolean): Promise<void> {
    this.systemdOwner = owner;
    try {
      await this.sd(conn, { path: SD_PATH, interface: MANAGER, member: "Subscribe" });
    } catch (err) {
      // after daemon-reexec systemd may remember our subscription
      if (!(err instanceof BusError && err.dbusName === "org.freedesktop.systemd1.AlreadySubscribed")) throw err;
    }
    await this.refreshAll(conn, { ref });
    this.backoffMs = this.initialBackoffMs;
    this.retryLog.recovered(`systemd: connected (${this.address})`);
    this.setStatus("ok", `connected to systemd (${this.address})`);
  }

  // --- the task queue ----------------------------------------------------------------------

  private enqueue(gen: number, task: () => Promise<void>): Promise<void> {
    const run = async () => {
      if (this.closed || gen !== this.generation) return;
      try {
        await task();
      } catch (err) {
        if (this.closed || gen !== this.generation) return;
        if (err instanceof BusError && err.dbusName === "gpudeck.Disconnected") return; // lost() handles it
        this.log(`systemd: ${(err as Error).message}; re-reading all units`);
        this.queueRecovery(gen);
      }
    };
    this.queue = this.queue.then(run, run);
    return this.queue;
  }

  /** After a failed task (e.g. a call timed out) what we hold may be stale: re-read, a second later. */
  private queueRecovery(gen: number): void {
    const conn = this.conn;
    if (this.recoveryQueued || !conn) return;
    this.recoveryQueued = true;
    const timer = setTimeout(() => {
      if (gen !== this.generation) {
        this.recoveryQueued = false; // a reconnect re-reads everything anyway
        return;
      }
      void this.enqueue(gen, async () => {
        this.recoveryQueued = false;
        if (this.systemdOwner) await this.refreshAll(conn, { ref: false });
      });
    }, 1000);
    timer.unref();
  }

  private enqueueAndWait(gen: number, task: () => Promise<void>): Promise<void> {
    let failure: unknown = null;
    return this.enqueue(gen, async () => {
      try {
        await task();
      } catch (err) {
        failure = err;
      }
    }).then(() => {
      if (failure) throw failure;
    });
  }

  // --- signals -----------------------------------------------------------------------------

  private async onSignal(conn: BusConnection, m: SignalMessage): Promise<void> {
    if (m.interface === "org.freedesktop.DBus" && m.member === "NameOwnerChanged") {
      if (m.sender !== "org.freedesktop.DBus" || m.body[0] !== SD) return;
      const newOwner = str(m.body[2]);
      if (!newOwner) {
        this.systemdOwner = null;
        this.setStatus("unreachable", "systemd left the bus (re-executing or restarting); waiting for it");
      } else if (newOwner !== this.systemdOwner) {
        this.log(`systemd: now on the bus as ${newOwner}; re-reading all units`);
        await this.attach(conn, newOwner, true);
      }
      return;
    }
    if (!this.systemdOwner || m.sender !== this.systemdOwner) return;

    if (m.interface === MANAGER && m.path === SD_PATH) {
      await this.onManagerSignal(conn, m);
      return;
    }
    if (m.interface === PROPS_IFACE && m.member === "PropertiesChanged") {
      const iface = str(m.body[0]);
      const unitName = this.unitByPath.get(m.path);
      if (unitName) {
        const unit = this.units.get(unitName);
        if (!unit || m.seq < unit.propsSeq) return; // the last full read already includes this
        Object.assign(unit.props, unwrapProps(m.body[1]));
        // systemd sends the type-specific interface (Service …) first, then Unit: evaluate on Unit
        if (iface === UNIT_IFACE) await this.evaluate(conn, unit, "live");
        return;
      }
      if (iface === JOB_IFACE && m.path.startsWith(JOB_PATH_PREFIX)) {
        const id = jobIdFromPath(m.path);
        const job = id === null ? undefined : this.jobs.get(id);
        const state = unwrapProps(m.body[1]).State;
        if (job && !job.running && state === "running") {
          job.running = true;
          this.emitJob(job, "running");
        }
      }
    }
  }

  private async onManagerSignal(conn: BusConnection, m: SignalMessage): Promise<void> {
    switch (m.member) {
      case "UnitNew": {
        const [name, path] = [str(m.body[0]), str(m.body[1])];
        if (this.allowedName(name) && !this.units.has(name)) await this.track(conn, name, path, true);
        return;
      }
      case "UnitRemoved":
        // Only garbage collection unloads a unit; we hold a ref, and a unit whose file is gone
        // disappears from the list at the next Reloading re-read.
        return;
      case "JobNew": {
        const [id, path, unit] = [num(m.body[0]), str(m.body[1]), str(m.body[2])];
        if (!this.units.has(unit) || this.jobs.has(id)) return;
        const { type, running } = await this.jobInfo(conn, id, path, this.units.get(unit)!.snapshot.subState);
        const job: KnownJob = { id, unit, type, running: false };
        this.jobs.set(id, job);
        this.emitJob(job, "queued");
        if (running) {
          job.running = true;
          this.emitJob(job, "running");
        }
        return;
      }
      case "JobRemoved": {
        const [id, unit, result] = [num(m.body[0]), str(m.body[2]), str(m.body[3])];
        const job = this.jobs.get(id);
        if (!job && !this.units.has(unit)) return;
        this.jobs.delete(id);
        this.emitJob(job ?? { id, unit, type: this.jobTypes.get(id) ?? "unknown", running: false }, "finished", result);
        return;
      }
      case "Reloading":
        // Reloading(true) when it begins, (false) when done: then everything may have changed
        if (m.body[0] === false) await this.refreshAll(conn, { ref: false });
        return;
      case "UnitFilesChanged":
        await this.refreshAll(conn, { ref: false });
        return;
      default:
        return;
    }
  }

  // --- reading units -------------------------------------------------------------------------

  private sd(conn: BusConnection, req: Omit<CallRequest, "destination">): Promise<unknown[]> {
    return conn.call({ destination: SD, ...req }, this.callTimeoutMs);
  }

  /** The unit's object path if systemd has it loaded; null when it does not (NoSuchUnit). */
  private async unitPathIfLoaded(conn: BusConnection, name: string): Promise<string | null> {
    try {
      const [path] = await this.sd(conn, { path: SD_PATH, interface: MANAGER, member: "GetUnit", signature: "s", body: [name] });
      return str(path);
    } catch (err) {
      if (err instanceof BusError && err.dbusName === "org.freedesktop.systemd1.NoSuchUnit") return null;
      throw err;
    }
  }

  private async loadUnit(conn: BusConnection, name: string): Promise<string> {
    const [path] = await this.sd(conn, { path: SD_PATH, interface: MANAGER, member: "LoadUnit", signature: "s", body: [name] });
    return str(path);
  }

  /** Names of units to show: explicit names in the globs, loaded units and unit files matching them. */
  private async discover(conn: BusConnection): Promise<Map<string, string | null>> {
    const found = new Map<string, string | null>();
    for (const g of this.globs) if (!/[*?]/.test(g) && this.allowedName(g)) found.set(g, null);
    if (this.globs.length === 0) return found;
    const [loaded] = await this.sd(conn, {
      path: SD_PATH,
      interface: MANAGER,
      member: "ListUnitsByPatterns",
      signature: "asas",
      body: [[], this.globs],
    });
    for (const row of Array.isArray(loaded) ? loaded : []) {
      if (!Array.isArray(row)) continue;
      // (name, description, load, active, sub, following, path, job id, job type, job path)
      const name = str(row[0]);
      // A unit whose file is gone stays loaded as long as we hold a ref; once inactive it is gone
      // for good (unless named explicitly in the globs, then it is shown as not-found).
      const vanished = str(row[2]) === "not-found" && str(row[3]) === "inactive" && !found.has(name);
      if (this.allowedName(name) && !vanished) found.set(name, str(row[6]) || null);
      const jobId = num(row[7]);
      if (jobId > 0 && str(row[8])) this.rememberJobType(jobId, str(row[8]));
    }
    const [files] = await this.sd(conn, {
      path: SD_PATH,
      interface: MANAGER,
      member: "ListUnitFilesByPatterns",
      signature: "asas",
      body: [[], this.globs],
    });
    for (const row of Array.isArray(files) ? files : []) {
      if (!Array.isArray(row)) continue;
      const name = str(row[0]).split("/").pop() ?? "";
      if (this.allowedName(name) && !found.has(name)) found.set(name, null);
    }
    return found;
  }

  /** Re-read every unit; report transitions (from timestamps), jobs and removals we missed. */
  private async refreshAll(conn: BusConnection, opts: { ref: boolean }): Promise<void> {
    const found = await this.discover(conn);
    for (const [name, knownPath] of found) {
      const unit = this.units.get(name);
      if (!unit) {
        await this.track(conn, name, knownPath, true);
        continue;
      }
      if (unit.matchedOn !== conn) {
        // a new connection (bus restarted): match rules and refs died with the old one
        await conn.addMatch(unitRule(unit.path));
        unit.matchedOn = conn;
        await this.ref(conn, unit.path);
      } else if (opts.ref) await this.ref(conn, unit.path);
      await this.readProps(conn, unit);
      await this.evaluate(conn, unit, "reconcile");
    }
    for (const unit of [...this.units.values()]) {
      if (found.has(unit.name)) continue;
      this.units.delete(unit.name);
      this.unitByPath.delete(unit.path);
      await conn.removeMatch(unitRule(unit.path)).catch(() => undefined);
      await this.sd(conn, { path: unit.path, interface: UNIT_IFACE, member: "Unref" }).catch(() => undefined);
      this.emit({ type: "unit-removed", name: unit.name });
    }
    await this.reconcileJobs(conn);
  }

  private async track(conn: BusConnection, name: string, knownPath: string | null, emitFirst: boolean): Promise<void> {
    const path = knownPath ?? (await this.loadUnit(conn, name));
    // Match first, then read: a change in between arrives after the reply and is applied.
    await conn.addMatch(unitRule(path));
    await this.ref(conn, path);
    const { body, seq } = await conn.callWithSeq(
      { destination: SD, path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [""] },
      this.callTimeoutMs,
    );
    const props = unwrapProps(body[0]);
    await this.ensureJobType(conn, props);
    const jobType = (id: number) => this.jobTypes.get(id) ?? null;
    const snapshot = snapshotFromProps(name, props, jobType);
    const summary = summaryFromProps(name, props, jobType);
    const unit: TrackedUnit = { name, path, props, propsSeq: seq, snapshot, summary, summaryJson: JSON.stringify(summary), matchedOn: conn };
    this.units.set(name, unit);
    this.unitByPath.set(path, name);
    if (emitFirst) this.emit({ type: "transition", transition: firstObservation(snapshot) });
    this.emit({ type: "unit", unit: summary });
  }

  private async ref(conn: BusConnection, path: string): Promise<void> {
    try {
      await this.sd(conn, { path, interface: UNIT_IFACE, member: "Ref" });
    } catch (err) {
      if (!this.refWarned) {
        this.refWarned = true;
        this.log(`systemd: cannot Ref units (${(err as Error).message}); inactive units may be unloaded and show their last state`);
      }
    }
  }

  private async readProps(conn: BusConnection, unit: TrackedUnit): Promise<void> {
    const { body, seq } = await conn.callWithSeq(
      { destination: SD, path: unit.path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [""] },
      this.callTimeoutMs,
    );
    unit.props = unwrapProps(body[0]);
    unit.propsSeq = seq;
  }

  /** Compare the unit's properties with what we last reported; emit transitions and the summary. */
  private async evaluate(conn: BusConnection, unit: TrackedUnit, mode: "live" | "reconcile"): Promise<void> {
    await this.ensureJobType(conn, unit.props);
    const jobType = (id: number) => this.jobTypes.get(id) ?? null;
    const next = snapshotFromProps(unit.name, unit.props, jobType);
    const transitions: UnitTransition[] =
      mode === "live" ? [liveTransition(unit.snapshot, next)].filter((t): t is UnitTransition => t !== null) : reconcileTransitions(unit.snapshot, next);
    unit.snapshot = next;
    for (const t of transitions) this.emit({ type: "transition", transition: t });
    const summary = summaryFromProps(unit.name, unit.props, jobType);
    const json = JSON.stringify(summary);
    if (json !== unit.summaryJson) {
      unit.summary = summary;
      unit.summaryJson = json;
      this.emit({ type: "unit", unit: summary });
    }
  }

  // --- jobs ----------------------------------------------------------------------------------

  private rememberJobType(id: number, type: string): void {
    this.jobTypes.set(id, type);
    if (this.jobTypes.size > 2000) this.jobTypes.delete(this.jobTypes.keys().next().value!);
  }

  /**
   * A job's type and state. Jobs of systemd's own making can be over before we ask (an automatic
   * restart job lives a few ms); a job that appears while its unit sits in auto-restart is the
   * restart job systemd 252 queues there (service_enter_restart: JOB_RESTART).
   */
  private async jobInfo(conn: BusConnection, id: number, path: string, unitSubState?: string): Promise<{ type: string; running: boolean }> {
    try {
      const props = unwrapProps((await this.sd(conn, { path, interface: PROPS_IFACE, member: "GetAll", signature: "s", body: [JOB_IFACE] }))[0]);
      const type = str(props.JobType) || this.jobTypes.get(id) || "unknown";
      this.rememberJobType(id, type);
      return { type, running: props.State === "running" };
    } catch {
      // the job is already gone (JobRemoved follows)
      const known = this.jobTypes.get(id) ?? (unitSubState === "auto-restart" ? "restart" : undefined);
      if (known) this.rememberJobType(id, known);
      return { type: known ?? "unknown", running: false };
    }
  }

  private async ensureJobType(conn: BusConnection, props: PlainProps): Promise<void> {
    const ref = parseJobRef(props.Job);
    if (ref && !this.jobTypes.has(ref.id)) await this.jobInfo(conn, ref.id, ref.path, str(props.SubState));
  }

  /** After a re-read: jobs that ended unseen get their result from the journal; new ones are announced. */
  private async reconcileJobs(conn: BusConnection): Promise<void> {
    const current = new Map<number, { unit: string; path: string }>();
    for (const unit of this.units.values()) {
      const ref = parseJobRef(unit.props.Job);
      if (ref) current.set(ref.id, { unit: unit.name, path: ref.path });
    }
    for (const job of [...this.jobs.values()]) {
      if (current.has(job.id)) continue;
      this.jobs.delete(job.id);
      const result = (await findJobResult({ ...this.journalSource, unit: job.unit, jobId: job.id }).catch(() => null)) ?? "unknown";
      this.emitJob(job, "finished", result);
    }
    for (const [id, { unit, path }] of current) {
      if (this.jobs.has(id)) continue;
      const { type, running } = await this.jobInfo(conn, id, path, this.units.get(unit)?.snapshot.subState);
      const job: KnownJob = { id, unit, type, running: false };
      this.jobs.set(id, job);
      this.emitJob(job, "queued");
      if (running) {
        job.running = true;
        this.emitJob(job, "running");
      }
    }
  }

  private emitJob(job: KnownJob, phase: JobEvent["phase"], result?: string): void {
    const e: JobEvent = { jobId: job.id, unit: job.unit, jobType: job.type, phase, atMs: Date.now() };
    if (result !== undefined) e.result = result;
    this.emit({ type: "job", job: e });
  }

  // --- processes -----------------------------------------------------------------------------

  private async inspect(pid: number): Promise<ProcessInfo | null> {
    if (!this.procs || !Number.isInteger(pid) || pid <= 0) return null;
    const { info } = await this.procs.inspect(pid);
    return info.state === "gone" ? null : info;
  }

  private async cgroupProcesses(controlGroup: string): Promise<ProcessInfo[]> {
    if (!this.procs || !this.cgroupRoot || !controlGroup) return [];
    const pids = await cgroupPids(this.cgroupRoot, controlGroup, 256);
    const infos = await Promise.all(pids.map((pid) => this.inspect(pid)));
    return infos.filter((p): p is ProcessInfo => p !== null);
  }

  // --- output --------------------------------------------------------------------------------

  private emit(e: SystemdEvent): void {
    try {
      this.onEvent(e);
    } catch (err) {
      this.log(`systemd: event consumer failed on ${e.type}: ${(err as Error).message} ${jsonSafe(e).slice(0, 200)}`);
    }
  }
}
