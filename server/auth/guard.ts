/**
 * Per-unit action guard: a second disruptive action (restart, stop, kill) on the same unit within
 * a short window needs explicit confirmation, so two people reacting to the same alert do not
 * restart a model server twice. In the panel database (`action_guard`, one row per host and unit),
 * so every replica sees every other's actions.
 *
 * `claim()` checks and records in one atomic statement, `INSERT … ON CONFLICT (host, unit) DO
 * UPDATE … WHERE last_at <= now - window RETURNING`: of any number of requests arriving together,
 * on any replicas, exactly one passes unconfirmed. "Now" is the database's clock on PostgreSQL (one
 * clock for every replica) and this machine's on SQLite (the database is on this machine); an
 * injected `clock` (tests) replaces both.
 */
import type { StoreSource } from "../store/lazyStore";
import type { UnitAction } from "../contract/types";
import type { Clock, Ms } from "./types";

export interface GuardedAction {
  host: string;
  unit: string;
  action: UnitAction;
  user: string;
  at: Ms;
}

export interface RecentActionGuardOptions {
  /** Default 60 000 ms. */
  windowMs?: Ms;
  /** Actions that are guarded, and that count as "previous" for each other. Default restart, stop, kill. */
  actions?: readonly UnitAction[];
  /** Replaces the database's clock (tests). */
  clock?: Clock;
}

export type GuardClaim =
  | {
      ok: true;
      /** Forget this claim (the action was never sent, e.g. the agent was unreachable). */
      release(): Promise<void>;
    }
  | {
      ok: false;
      previous: GuardedAction;
      /** Sentence for the confirmation dialog. */
      message: string;
    };

const PAST_TENSE: Record<UnitAction, string> = {
  start: "started",
  stop: "stopped",
  restart: "restarted",
  "reset-failed": "reset",
  kill: "killed",
};

function describe(previous: GuardedAction, now: Ms): string {
  const seconds = Math.max(0, Math.round((now - previous.at) / 1000));
  const past = PAST_TENSE[previous.action];
  return `${previous.user} ${past} ${previous.unit} ${seconds} s ago; confirm to ${previous.action === "restart" ? "do it again" : "go ahead"}`;
}

const UNGUARDED: GuardClaim = { ok: true, release: async () => undefined };

export class RecentActionGuard {
  readonly windowMs: Ms;
  readonly actions: readonly UnitAction[];
  private readonly clock: Clock | null;

  constructor(
    private readonly source: StoreSource,
    options: RecentActionGuardOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000;
    this.actions = options.actions ?? ["restart", "stop", "kill"];
    this.clock = options.clock ?? null;
  }

  private async now(): Promise<Ms> {
    return this.clock ? this.clock() : (await this.source.get()).nowMs();
  }

  isGuarded(action: UnitAction): boolean {
    return this.actions.includes(action);
  }

  private async latest(host: string, unit: string, now: Ms): Promise<GuardedAction | null> {
    const { db } = await this.source.get();
    const row = await db
      .selectFrom("action_guard")
      .selectAll()
      .where("host", "=", host)
      .where("unit", "=", unit)
      .where("last_at", ">", now - this.windowMs)
      .executeTakeFirst();
    return row ? { host: row.host, unit: row.unit, action: row.action as UnitAction, user: row.user, at: row.last_at } : null;
  }

  /** The guarded action taken on this unit within the window, if any (for the UI to warn early). */
  async peek(host: string, unit: string): Promise<GuardedAction | null> {
    return this.latest(host, unit, await this.now());
  }

  /**
   * Ask to perform `action`. Unguarded actions always pass. A guarded action passes when nothing
   * guarded happened on the unit within the window, or when `confirmed`; passing records it.
   */
  async claim(request: { host: string; unit: string; action: UnitAction; user: string; confirmed?: boolean }): Promise<GuardClaim> {
    if (!this.isGuarded(request.action)) return UNGUARDED;
    const { db } = await this.source.get();
    const { host, unit, action, user } = request;
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = await this.now();
      // a confirmed claim replaces a recent one: remembered, to put back if this one is released
      const previous = request.confirmed ? await this.latest(host, unit, now) : null;
      const claimed = await db
        .insertInto("action_guard")
        .values({ host, unit, action, user, last_at: now })
        .onConflict((oc) => {
          const update = oc.columns(["host", "unit"]).doUpdateSet({ action, user, last_at: now });
          return request.confirmed ? update : update.where("action_guard.last_at", "<=", now - this.windowMs);
        })
        .returning("last_at")
        .executeTakeFirst();
      if (claimed) {
        const mine: GuardedAction = { host, unit, action, user, at: now };
        return { ok: true, release: () => this.release(mine, previous) };
      }
      const blocking = await this.latest(host, unit, now);
      // released or expired between the two statements: try again
      if (blocking) return { ok: false, previous: blocking, message: describe(blocking, now) };
    }
    throw new Error("the action guard could not record the action; try again");
  }

  /** Undo `mine` unless someone acted since: put back what it replaced if still recent, else forget it. */
  private async release(mine: GuardedAction, previous: GuardedAction | null): Promise<void> {
    const { db } = await this.source.get();
    const stillMine = db
      .updateTable("action_guard")
      .where("host", "=", mine.host)
      .where("unit", "=", mine.unit)
      .where("user", "=", mine.user)
      .where("action", "=", mine.action)
      .where("last_at", "=", mine.at);
    if (previous && mine.at - previous.at < this.windowMs) {
      await stillMine.set({ action: previous.action, user: previous.user, last_at: previous.at }).execute();
      return;
    }
    await db
      .deleteFrom("action_guard")
      .where("host", "=", mine.host)
      .where("unit", "=", mine.unit)
      .where("user", "=", mine.user)
      .where("action", "=", mine.action)
      .where("last_at", "=", mine.at)
      .execute();
  }
}
