/**
 * The words the timeline speaks: aria-labels of its items, its title and window, and what a span
 * without an agent means. Pure, so screen-reader text is tested without rendering.
 */
import { formatDuration, formatTime } from "@/server/contract/format";
import { CHAR_PX, clusterBreakdown, type ClusterBox } from "./layout";
import { segmentDurationMs, type TimelineSegment } from "./segments";
import type { StateStyle } from "./stateStyle";
import type { TimeWindow } from "./view";

/** What a span without an agent means, for its label and tooltip. */
export const GAP_MEANING = "states rebuilt from systemd's timestamps, substates not observed";

/** "active (running) from 11:58:30 to now, so far 1 min 30 s" */
export function segmentLabel(s: TimelineSegment, style: StateStyle, nowMs: number, timeZone?: string): string {
  const d = segmentDurationMs(s, nowMs);
  const from = s.realStartMs == null ? "before the recorded history" : formatTime(s.realStartMs, { timeZone });
  const to = s.open ? "now" : formatTime(s.realEndMs ?? s.endMs, { timeZone });
  return `${style.label} from ${from} to ${to}${d == null ? "" : `, ${s.open ? "so far " : ""}${formatDuration(d)}`}${s.result && s.result !== "success" ? `, result ${s.result}` : ""}`;
}

/** "2 state changes from 11:53:20 to 11:53:23: deactivating (stop-sigterm) 1×, inactive (dead) 1×. Zoom in to see them." */
export function clusterLabel(c: ClusterBox, timeZone?: string): string {
  const parts = clusterBreakdown(c.segments).map((e) => `${e.style.label} ${e.count}×`);
  return `${c.segments.length} state changes from ${formatTime(c.startMs, { timeZone })} to ${formatTime(c.endMs, { timeZone })}: ${parts.join(", ")}. Zoom in to see them.`;
}

/** "Agent not running 14:02:10 – 14:07:55 (5 min 45 s): states rebuilt …": the whole span, also when clipped. */
export function gapLabel(g: { fromMs: number; toMs: number }, timeZone?: string): string {
  return `Agent not running ${formatTime(g.fromMs, { timeZone })} – ${formatTime(g.toMs, { timeZone })} (${formatDuration(g.toMs - g.fromMs)}): ${GAP_MEANING}`;
}

/** The gap handle's text, if the span is wide enough for it. */
export function fitGapText(width: number): string | null {
  for (const t of ["agent not running", "no agent"]) if (t.length * CHAR_PX + 10 <= width) return t;
  return null;
}

export function timelineTitle(unitName?: string): string {
  return unitName ? `State timeline of ${unitName}` : "State timeline";
}

/** "11:00 to now" / "09:10 to 09:40": the window, in minutes, with the date when not today. */
export function windowText(win: TimeWindow, following: boolean, nowMs: number, timeZone?: string): string {
  const at = (ms: number) => formatTime(ms, { timeZone, seconds: false, date: "auto", relativeToMs: nowMs });
  return `${at(win.fromMs)} to ${following ? "now" : at(win.toMs)}`;
}

/** The sentence the plot's label ends with when spans without an agent are in view; "" when none. */
export function gapSummary(count: number): string {
  return count === 0 ? "" : ` No agent was running during ${count === 1 ? "1 span" : `${count} spans`} in view: ${GAP_MEANING}.`;
}
