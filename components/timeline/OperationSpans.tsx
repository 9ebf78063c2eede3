/**
 * GPU-aware operations in the marker row: a bar from the request to its end (to now while it
 * runs, drawn with an open end) with a tick at each step, red when it failed or timed out. One
 * tab stop for the list (roving focus); the tooltip lists the steps.
 */
import { operationTone } from "@/components/operations/operationView";
import { LANE_TOP } from "./frame";
import { operationLabel, type OperationSpan } from "./timelineEvents";
import type { RovingFocus } from "./useRovingFocus";
import type { TipTargetProps } from "./useTimelineTooltip";

const BAR_Y = LANE_TOP - 7;
const BAR_H = 5;

export function OperationSpans({
  spans,
  nowMs,
  timeZone,
  activeIndex,
  roving,
  tipTarget,
}: {
  spans: readonly OperationSpan[];
  nowMs: number;
  timeZone?: string;
  activeIndex: number | null;
  roving: RovingFocus;
  tipTarget: (index: number) => TipTargetProps;
}) {
  if (spans.length === 0) return null;
  return (
    <g role="list" aria-label="GPU-aware restarts in view">
      {spans.map((s, i) => {
        const color = operationTone(s.op.step) === "bad" ? "var(--gd-marker-failed)" : "var(--gd-op)";
        return (
          <g
            key={s.op.id}
            ref={roving.ref(i)}
            role="listitem"
            aria-label={operationLabel(s, nowMs, timeZone)}
            tabIndex={roving.tabIndex(i)}
            data-op={i}
            data-step={s.op.step}
            className="cursor-pointer outline-none"
            {...tipTarget(i)}
          >
            {/* hit area over the row's lower half, so flags above stay reachable */}
            <rect x={s.x} y={BAR_Y - 3} width={Math.max(s.width, 8)} height={BAR_H + 5} fill="transparent" />
            <rect x={s.x} y={BAR_Y} width={s.width} height={BAR_H} rx={1} style={{ fill: color }} strokeDasharray={s.open ? "3 2" : undefined} />
            {s.stepXs.map((t) => (
              <line
                key={`${t.step}-${t.x}`}
                x1={t.x}
                x2={t.x}
                y1={BAR_Y - 2}
                y2={BAR_Y + BAR_H + 2}
                style={{ stroke: "var(--gd-surface-fg)" }}
                strokeWidth={1}
              />
            ))}
            {i === activeIndex && (
              <rect
                x={s.x - 1}
                y={BAR_Y - 2}
                width={s.width + 2}
                height={BAR_H + 4}
                fill="none"
                style={{ stroke: "var(--gd-focus)" }}
                strokeWidth={2}
                pointerEvents="none"
              />
            )}
          </g>
        );
      })}
    </g>
  );
}
