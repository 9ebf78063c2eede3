/**
 * Opt-in self-healing (`healAfter`, `healMax` beside a unit's probe settings): the agent's own
 * GPU-aware restart of a unit that was serving and has failed its readiness probe for that long
 * while systemd still calls it active. `UnitSummary.selfHeal` says what it did last (for an hour
 * after) or why it held back. Part of the contract: imports nothing else of the project.
 */

/** The actor self-heal restarts are recorded (and audited) as. */
export const SELF_HEAL_USER = "gpudeck (self-heal)";

/**
 * restarting: its GPU-aware restart runs (`operationId`); loading: restarted, the engine loads;
 * back: it serves again; not-back: the restart failed, or the engine failed or stopped after it;
 * held-back: it would restart the unit, but a limit stops it (`message` says which).
 */
export type SelfHealState = "restarting" | "loading" | "back" | "not-back" | "held-back";

export interface SelfHealMarker {
  state: SelfHealState;
  /** when the restart began (held-back: when it was held back) */
  atMs: number;
  /** the probe failures that made it act, in words */
  reason: string;
  operationId: string | null;
  /** one sentence, e.g. "gpudeck restarted it by itself at 14:02:11 UTC; it serves again (since 14:04:40 UTC)." */
  message: string;
  /** self-heal restarts of this unit in the last hour, and the most allowed (healMax) */
  inLastHour: number;
  max: number;
}
