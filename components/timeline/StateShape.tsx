/**
 * How a state looks: its fill colour, the pattern drawn over it and, for the quiet states, an
 * outline. Shared by lane segments and legend swatches so both always match.
 */
import type { StatePattern, StateStyle } from "./stateStyle";

/** SVG pattern tiles drawn over a state's fill colour; ids are `${idPrefix}-${pattern}`, plus `${idPrefix}-gap`. */
export function PatternDefs({ idPrefix }: { idPrefix: string }) {
  const ink = { stroke: "var(--gd-pattern-ink)" } as const;
  return (
    <defs>
      <pattern id={`${idPrefix}-diagonal`} width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <line x1="0" y1="0" x2="0" y2="7" style={ink} strokeWidth="3" />
      </pattern>
      <pattern id={`${idPrefix}-diagonal-reverse`} width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)">
        <line x1="0" y1="0" x2="0" y2="7" style={ink} strokeWidth="2" />
      </pattern>
      <pattern id={`${idPrefix}-vertical`} width="6" height="6" patternUnits="userSpaceOnUse">
        <line x1="1" y1="0" x2="1" y2="6" style={ink} strokeWidth="1.5" />
      </pattern>
      <pattern id={`${idPrefix}-horizontal`} width="6" height="6" patternUnits="userSpaceOnUse">
        <line x1="0" y1="1" x2="6" y2="1" style={ink} strokeWidth="1.5" />
      </pattern>
      <pattern id={`${idPrefix}-dots`} width="6" height="6" patternUnits="userSpaceOnUse">
        <circle cx="3" cy="3" r="1.3" style={{ fill: "var(--gd-pattern-ink)" }} />
      </pattern>
      <pattern id={`${idPrefix}-crosshatch`} width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <line x1="0" y1="0" x2="0" y2="7" style={ink} strokeWidth="1.5" />
        <line x1="0" y1="0" x2="7" y2="0" style={ink} strokeWidth="1.5" />
      </pattern>
      {/* no agent watching: wider, steeper and in its own ink, unlike any state's pattern */}
      <pattern id={`${idPrefix}-gap`} width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(-60)">
        <line x1="0" y1="0" x2="0" y2="8" style={{ stroke: "var(--gd-gap-ink)" }} strokeWidth="1.5" />
      </pattern>
    </defs>
  );
}

function patternFill(idPrefix: string, pattern: StatePattern): string | null {
  switch (pattern) {
    case "solid":
    case "hollow":
    case "dashed-outline":
      return null;
    default:
      return `url(#${idPrefix}-${pattern})`;
  }
}

/** What a shape needs of a style: a state's (./stateStyle.ts) or a readiness state's (./readinessStyle.ts). */
export type ShapeStyle = Pick<StateStyle, "colorVar" | "textColorVar" | "pattern">;

/** A state's fill + pattern + outline in a box, used by segments, readiness boxes and the legend swatches. */
export function StateShape({
  idPrefix,
  style,
  x,
  y,
  width,
  height,
}: {
  idPrefix: string;
  style: ShapeStyle;
  x: number;
  y: number;
  width: number;
  height: number;
}) {
  const overlay = patternFill(idPrefix, style.pattern);
  const outlined = style.pattern === "hollow" || style.pattern === "dashed-outline";
  return (
    <>
      <rect x={x} y={y} width={width} height={height} style={{ fill: style.colorVar }} />
      {overlay && <rect x={x} y={y} width={width} height={height} fill={overlay} />}
      {outlined && width > 2 && (
        <rect
          x={x + 0.5}
          y={y + 0.5}
          width={Math.max(0, width - 1)}
          height={height - 1}
          fill="none"
          style={{ stroke: style.textColorVar }}
          strokeOpacity={0.5}
          strokeDasharray={style.pattern === "dashed-outline" ? "3 2" : undefined}
        />
      )}
    </>
  );
}
