/** The legend: the states in view with the same fill and pattern as the lanes, then the other marks in view. */
import { READINESS_STYLE_ORDER, readinessStyle, type ReadinessStyle } from "./readinessStyle";
import type { ReadinessSegment } from "./readinessSegments";
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

/** One style per readiness state in view, in the order a start moves through them. */
export function legendReadinessStyles(segments: readonly ReadinessSegment[]): ReadinessStyle[] {
  const states = new Set(segments.map((s) => s.state));
  return READINESS_STYLE_ORDER.filter((s) => states.has(s)).map(readinessStyle);
}

export function TimelineLegend({
  styles,
  readinessStyles = [],
  idPrefix,
  gaps,
  markers,
  operations = false,
  faults = false,
  now,
}: {
  styles: readonly StateStyle[];
  readinessStyles?: readonly ReadinessStyle[];
  idPrefix: string;
  /** entries for marks in view: spans without an agent, action markers, operations, faults, the now line */
  gaps: boolean;
  markers: boolean;
  operations?: boolean;
  faults?: boolean;
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
      {readinessStyles.map((s) => (
        <li key={`ready-${s.key}`} className="flex items-center gap-1.5" data-testid="legend-readiness">
          <svg width={22} height={12} aria-hidden="true" className="shrink-0">
            <StateShape idPrefix={idPrefix} style={s} x={0} y={0} width={22} height={12} />
          </svg>
          {`engine ${s.label}`}
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
      {operations && (
        <li className="flex items-center gap-1.5">
          <svg width={22} height={12} aria-hidden="true">
            <rect x={1} y={4} width={20} height={5} style={{ fill: "var(--gd-op)" }} />
            <line x1={8} x2={8} y1={2} y2={11} style={{ stroke: "var(--gd-surface-fg)" }} />
          </svg>
          restart when its GPUs are free (steps)
        </li>
      )}
      {faults && (
        <li className="flex items-center gap-1.5">
          <svg width={12} height={12} aria-hidden="true">
            <path d="M6,0.5 l5.5,11 h-11 z" style={{ fill: "var(--gd-fault)" }} />
          </svg>
          GPU fault (Xid)
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
