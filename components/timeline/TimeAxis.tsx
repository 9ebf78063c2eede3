/** The lanes' background, the grid lines and time labels below them, and the lanes' names in the gutter. */
import { LANE, LANE_TOP, PLAIN_FRAME, READINESS_LANE, type TimelineFrame } from "./frame";
import type { TimeScale } from "./layout";
import type { TimeTick } from "./ticks";

export function TimeAxis({ scale, ticks, frame = PLAIN_FRAME }: { scale: TimeScale; ticks: readonly TimeTick[]; frame?: TimelineFrame }) {
  const bottom = frame.lanesBottom;
  return (
    <g aria-hidden="true">
      <rect x={scale.left} y={LANE_TOP} width={scale.width} height={LANE} style={{ fill: "var(--gd-state-unknown)" }} opacity={0.5} />
      {frame.readinessTop != null && (
        <rect x={scale.left} y={frame.readinessTop} width={scale.width} height={READINESS_LANE} style={{ fill: "var(--gd-state-unknown)" }} opacity={0.5} />
      )}
      {ticks.map((t) => {
        const x = scale.x(t.atMs);
        return (
          <g key={t.atMs}>
            <line x1={x} x2={x} y1={LANE_TOP} y2={bottom + 4} style={{ stroke: "var(--gd-grid)" }} />
            <text x={x} y={bottom + 16} textAnchor="middle" style={{ fill: "var(--gd-axis)", fontWeight: t.isDayStart ? 600 : 400 }}>
              {t.label}
            </text>
          </g>
        );
      })}
      <text x={scale.left - 6} y={LANE_TOP + LANE / 2 + 4} textAnchor="end" style={{ fill: "var(--gd-axis)" }}>
        state
      </text>
      {frame.readinessTop != null && (
        <text x={scale.left - 6} y={frame.readinessTop + READINESS_LANE / 2 + 4} textAnchor="end" style={{ fill: "var(--gd-axis)" }}>
          engine
        </text>
      )}
    </g>
  );
}

/** The now line, and the hairline of a time hovered elsewhere (the GPU chart); null draws none. */
export function TimeCursors({ nowX, hoverX, frame = PLAIN_FRAME }: { nowX: number | null; hoverX: number | null; frame?: TimelineFrame }) {
  return (
    <>
      {nowX != null && (
        <g aria-hidden="true" pointerEvents="none">
          <line x1={nowX} x2={nowX} y1={LANE_TOP - 4} y2={frame.lanesBottom} style={{ stroke: "var(--gd-now)" }} strokeWidth={2} />
        </g>
      )}
      {hoverX != null && (
        <line
          x1={hoverX}
          x2={hoverX}
          y1={0}
          y2={frame.lanesBottom}
          style={{ stroke: "var(--gd-hover)" }}
          strokeDasharray="2 2"
          pointerEvents="none"
          aria-hidden="true"
        />
      )}
    </>
  );
}
