/** The legend: the states in view with the same fill and pattern as the lane, then the other marks in view. */
import { STATE_STYLE_KEYS, stateStyle, type StateStyle } from "./stateStyle";
import type { TimelineSegment } from "./segments";
import { StateShape } from "./StateShape";

/** One style per state label in view, in lifecycle order (inactive → start-pre → … → failed → auto-restart), not order of appearance. */
export function legendStyles(segments: readonly TimelineSegment[]): StateStyle[] {
  const seen = new Map<string, StateStyle>();
  for (const s of segments) {
    const st = stateStyle(s.activeState, s.subState);
    if (!seen.has(st.label)) seen.set(st.label, st);
  }
  const rank = (st: StateStyle) => STATE_STYLE_KEYS.indexOf(st.key);
  return [...seen.values()].sort((a, b) => rank(a) - rank(b) || a.label.localeCompare(b.label));
}

export function TimelineLegend({
  styles,
  idPrefix,
  gaps,
  markers,
  now,
}: {
  styles: readonly StateStyle[];
  idPrefix: string;
  /** entries for marks in view: spans without an agent, action markers, the now line */
  gaps: boolean;
  markers: boolean;
  now: boolean;
}) {
  return (
    <ul className="flex flex-wrap gap-x-3 gap-y-1 text-xs" aria-label="Legend">
      {styles.map((s) => (
        <li key={s.label} className="flex items-center gap-1.5">
          <svg width={22} height={12} aria-hidden="true" className="shrink-0">
            <StateShape idPrefix={idPrefix} style={s} x={0} y={0} width={22} height={12} />
          </svg>
          {s.label}
        </li>
      ))}
      {gaps && (
        <li className="flex items-center gap-1.5" data-testid="legend-gap">
          <svg width={22} height={12} aria-hidden="true" className="shrink-0">
            <rect x={0} y={0} width={22} height={12} style={{ fill: "var(--gd-gap-wash)" }} />
            <rect x={0} y={0} width={22} height={12} fill={`url(#${idPrefix}-gap)`} />
            <rect x={0.5} y={0.5} width={21} height={11} fill="none" style={{ stroke: "var(--gd-gap-edge)" }} strokeDasharray="3 2" />
          </svg>
          agent not running
        </li>
      )}
      {markers && (
        <li className="flex items-center gap-1.5">
          <svg width={12} height={12} aria-hidden="true">
            <path d="M1,1 h10 l-3,4.5 l3,4.5 h-10 z" style={{ fill: "var(--gd-marker)" }} />
          </svg>
          action (who, what, why)
        </li>
      )}
      {now && (
        <li className="flex items-center gap-1.5">
          <span aria-hidden="true" className="inline-block h-3 w-0.5" style={{ background: "var(--gd-now)" }} />
          now
        </li>
      )}
    </ul>
  );
}
