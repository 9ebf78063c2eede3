/**
 * Per-unit action guard: a second disruptive action (restart, stop, kill) on the same unit within
 * a short window needs explicit confirmation, so two people reacting to the same alert do not
 * restart a model server twice. In memory; the window is short and a panel restart may forget it.
 *
 * `claim()` checks and records in one synchronous step, so two requests arriving together cannot
 * both pass unconfirmed.
 */
import type { UnitAction } from "../contract/types";
import { systemClock, type Clock, type Ms } from "./types";

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
  clock?: Clock;
}

export type GuardClaim =
  | {
      ok: true;
      /** Forget this claim (the action was never sent, e.g. the agent was unreachable). */
      release(): void;
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

export class RecentActionGuard {
  readonly windowMs: Ms;
  readonly actions: readonly UnitAction[];
  private readonly clock: Clock;
  private readonly recent = new Map<string, GuardedAction>();

  constructor(options: RecentActionGuardOptions = {}) {
    this.windowMs = options.windowMs ?? 60_000;
    this.actions = options.actions ?? ["restart", "stop", "kill"];
    this.clock = options.clock ?? systemClock;
  }

  private key(host: string, unit: string): string {
    return JSON.stringify([host, unit]);
  }

  private prune(now: Ms): void {
    for (const [key, entry] of this.recent) if (now - entry.at >= this.windowMs) this.recent.delete(key);
  }

  isGuarded(action: UnitAction): boolean {
    return this.actions.includes(action);
  }

  /** The guarded action taken on this unit within the window, if any (for the UI to warn early). */
  peek(host: string, unit: string): GuardedAction | null {
    const now = this.clock();
    this.prune(now);
    return this.recent.get(this.key(host, unit)) ?? null;
  }

  /**
   * Ask to perform `action`. Unguarded actions always pass. A guarded action passes when nothing
   * guarded happened on the unit within the window, or when `confirmed`; passing records it.
   */
  claim(request: { host: string; unit: string; action: UnitAction; user: string; confirmed?: boolean }): GuardClaim {
    if (!this.isGuarded(request.action)) return { ok: true, release: () => {} };
    const now = this.clock();
    this.prune(now);
    const key = this.key(request.host, request.unit);
    const previous = this.recent.get(key);
    if (previous && !request.confirmed) return { ok: false, previous: { ...previous }, message: describe(previous, now) };
    const entry: GuardedAction = { host: request.host, unit: request.unit, action: request.action, user: request.user, at: now };
    this.recent.set(key, entry);
    return {
      ok: true,
      release: () => {
        if (this.recent.get(key) !== entry) return; // someone acted since; keep theirs
        if (previous && now - previous.at < this.windowMs) this.recent.set(key, previous);
        else this.recent.delete(key);
      },
    };
  }
}
