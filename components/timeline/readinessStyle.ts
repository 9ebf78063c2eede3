/**
 * How each readiness state looks on the readiness lane and in its legend. Serving is a solid
 * fill of its own (unlike systemd's running green), loading carries stripes, not answering dots,
 * failed a cross-hatch, unknown an outline: they read in greyscale too, and every box says its
 * state in words. Colours are CSS variables in ./palette.css.
 */
import type { ReadinessState } from "@/server/contract/readiness";
import type { StatePattern } from "./stateStyle";

export interface ReadinessStyle {
  key: ReadinessState;
  /** what the legend calls it */
  label: string;
  colorVar: string;
  textColorVar: string;
  pattern: StatePattern;
  description: string;
}

const BASE: Record<ReadinessState, { label: string; pattern: StatePattern; description: string }> = {
  serving: { label: "serving", pattern: "solid", description: "the engine answers requests" },
  loading: { label: "loading", pattern: "vertical", description: "running, the engine loads (the box names the stage)" },
  "not-serving": { label: "not serving", pattern: "dots", description: "running, but the engine does not answer" },
  failed: { label: "engine failed", pattern: "crosshatch", description: "the engine logged a fatal error" },
  unknown: { label: "unknown", pattern: "dashed-outline", description: "not running, or not judged" },
};

export function readinessStyle(state: ReadinessState): ReadinessStyle {
  const b = BASE[state];
  return { key: state, ...b, colorVar: `var(--gd-ready-${state})`, textColorVar: `var(--gd-ready-${state}-fg)` };
}

/** Legend order: the order a start moves through them. */
export const READINESS_STYLE_ORDER: readonly ReadinessState[] = ["unknown", "loading", "serving", "not-serving", "failed"];
