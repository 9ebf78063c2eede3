/**
 * One look per systemd ActiveState/SubState pair, shared by the timeline, its legend and any
 * state badge. Colour is never the only cue: every style has a text label and a fill pattern
 * that differ from its neighbours', so the states read in greyscale, on e-ink and to people
 * who do not see the hue.
 *
 * Colours are CSS variables defined in ./palette.css (light and dark values).
 */

export type StatePattern =
  | "solid" // active (running): the calm default
  | "hollow" // inactive: nothing is happening
  | "diagonal" // start-pre: the incident's state, must stand out
  | "vertical" // other activating steps
  | "dots" // auto-restart: waiting RestartSec before trying again
  | "horizontal" // reloading
  | "diagonal-reverse" // deactivating
  | "crosshatch" // failed
  | "dashed-outline"; // unknown / maintenance

export type StateStyleKey =
  "inactive" | "start-pre" | "activating" | "auto-restart" | "running" | "active" | "reloading" | "stopping" | "killing" | "failed" | "maintenance" | "unknown";

export interface StateStyle {
  key: StateStyleKey;
  /** systemctl's wording: "activating (start-pre)", "active (running)", "failed" */
  label: string;
  /** for narrow places: "start-pre", "running" */
  shortLabel: string;
  /** CSS colour of the fill, e.g. "var(--gd-state-start-pre)" */
  colorVar: string;
  /** CSS colour for text drawn on the fill */
  textColorVar: string;
  /** class that sets --gd-fill / --gd-fg for badges (see palette.css) */
  className: string;
  pattern: StatePattern;
  /** what the legend says about the family, e.g. "starting: ExecStartPre running" */
  description: string;
}

interface StyleBase {
  pattern: StatePattern;
  description: string;
}

const BASE: Record<StateStyleKey, StyleBase> = {
  inactive: { pattern: "hollow", description: "stopped" },
  "start-pre": { pattern: "diagonal", description: "starting: ExecStartPre running" },
  activating: { pattern: "vertical", description: "starting" },
  "auto-restart": { pattern: "dots", description: "waiting to restart (Restart=)" },
  running: { pattern: "solid", description: "running" },
  active: { pattern: "solid", description: "active" },
  reloading: { pattern: "horizontal", description: "reloading" },
  stopping: { pattern: "diagonal-reverse", description: "stopping" },
  killing: { pattern: "diagonal-reverse", description: "stopping: SIGKILL sent" },
  failed: { pattern: "crosshatch", description: "failed" },
  maintenance: { pattern: "dashed-outline", description: "maintenance" },
  unknown: { pattern: "dashed-outline", description: "unknown state" },
};

export function stateStyleKey(activeState: string, subState: string): StateStyleKey {
  // systemd < 254 reports auto-restart under "activating", newer ones add auto-restart-queued;
  // either way it is the pause between a failure and the next try.
  if (subState === "auto-restart" || subState === "auto-restart-queued") return "auto-restart";
  switch (activeState) {
    case "inactive":
      return "inactive";
    case "activating":
      return subState === "start-pre" ? "start-pre" : "activating";
    case "active":
      if (subState === "running") return "running";
      if (subState.startsWith("reload")) return "reloading";
      return "active";
    case "reloading":
      return "reloading";
    case "deactivating":
      return subState === "stop-sigkill" || subState === "final-sigkill" ? "killing" : "stopping";
    case "failed":
      return "failed";
    case "maintenance":
      return "maintenance";
    default:
      return "unknown";
  }
}

/** systemctl's wording of the pair: the sub-state in parentheses unless it repeats the active state. */
export function stateLabel(activeState: string, subState: string): string {
  const a = activeState || "unknown";
  return subState && subState !== a ? `${a} (${subState})` : a;
}

export function stateStyle(activeState: string, subState: string): StateStyle {
  const key = stateStyleKey(activeState, subState);
  const base = BASE[key];
  return {
    key,
    label: stateLabel(activeState, subState),
    shortLabel: subState && subState !== activeState ? subState : activeState || "unknown",
    colorVar: `var(--gd-state-${key})`,
    textColorVar: `var(--gd-state-${key}-fg)`,
    className: `gd-state gd-state-${key}`,
    pattern: base.pattern,
    description: base.description,
  };
}

/** All style keys in legend order (the order a unit moves through them). */
export const STATE_STYLE_KEYS: readonly StateStyleKey[] = [
  "inactive",
  "start-pre",
  "activating",
  "running",
  "active",
  "reloading",
  "stopping",
  "killing",
  "failed",
  "auto-restart",
  "maintenance",
  "unknown",
];

/**
 * Sort rank for lists of units: failed first, then anything in motion (activating,
 * deactivating, reloading, auto-restart), then active, then inactive. Lower = earlier.
 */
export function stateSortRank(activeState: string, subState = ""): number {
  if (activeState === "failed") return 0;
  if (subState === "auto-restart" || subState === "auto-restart-queued") return 1;
  if (activeState === "activating" || activeState === "deactivating" || activeState === "reloading" || activeState === "maintenance") return 1;
  if (activeState === "active") return 2;
  if (activeState === "inactive") return 3;
  return 1; // unknown states deserve a look
}
