/**
 * What every diagnosis case reads: the facts, the unit, and the derived facts several cases
 * share. Built once per `diagnose()` call; the cheap derivations are fields, the costly ones
 * (the last failure, the start-pre GPU analysis) are `perCall` functions in their own modules,
 * computed on first use and then reused by every later case of the same call.
 */
import type { UnitDetail, UnitTransition } from "../contract/types";
import type { DiagnosisFacts } from "./types";
import { lastFailurePoint, lastTransitionInto, samePair, type FailurePoint } from "./history";

export interface DiagnosisContext {
  facts: DiagnosisFacts;
  unit: UnitDetail;
  name: string;
  now: number;
  /** Only this unit's transitions, oldest → newest. */
  transitions: UnitTransition[];
  /** The newest of `transitions`; null when none were recorded. */
  lastTransition: UnitTransition | null;
  /** When the unit entered its current state, in ms; null = unknown. */
  stateEnteredMs: number | null;
  /** The last real failure in `transitions` (see lastFailurePoint); null = none recorded. */
  failurePoint: FailurePoint | null;
}

export const usecToMs = (usec: number): number | null => (Number.isFinite(usec) && usec > 0 ? usec / 1000 : null);
export const msToUsec = (ms: number): number => ms * 1000;

export function buildContext(facts: DiagnosisFacts, unit: UnitDetail): DiagnosisContext {
  const name = unit.name || facts.requestedName;
  const transitions = facts.recentTransitions.filter((t) => t.unit === "" || t.unit === name);
  return {
    facts,
    unit,
    name,
    now: facts.nowMs,
    transitions,
    lastTransition: transitions[transitions.length - 1] ?? null,
    stateEnteredMs: stateEnteredMs(unit, transitions),
    failurePoint: lastFailurePoint(transitions),
  };
}

function stateEnteredMs(unit: UnitDetail, transitions: readonly UnitTransition[]): number | null {
  const fromUnit = usecToMs(unit.stateChangeUsec);
  if (fromUnit !== null) return fromUnit;
  const t = lastTransitionInto(transitions, (to) => samePair(to, unit));
  return t ? usecToMs(t.atUsec) : null;
}

/** How long the unit has been in its current state (0 when unknown). */
export function sinceState(ctx: DiagnosisContext): number {
  return ctx.stateEnteredMs === null ? 0 : Math.max(0, ctx.now - ctx.stateEnteredMs);
}

/**
 * A derivation computed at most once per diagnose() call, on first use: a case that does not
 * need it pays nothing, and cases tried after it reuse the result.
 */
export function perCall<T>(derive: (ctx: DiagnosisContext) => T): (ctx: DiagnosisContext) => T {
  const cache = new WeakMap<DiagnosisContext, T>();
  return (ctx) => {
    if (cache.has(ctx)) return cache.get(ctx) as T;
    const value = derive(ctx);
    cache.set(ctx, value);
    return value;
  };
}
