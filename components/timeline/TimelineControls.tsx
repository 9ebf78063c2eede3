/**
 * The timeline's header: its title, the range buttons (15 min … 24 h, the parent owns the range)
 * and zoom/pan/live buttons for people who do not drag, pinch or use the keys.
 */
import { RANGE_LABEL, TIME_RANGES, type TimeRange, type TimeWindow, type ViewAction } from "./view";

/** A pan button moves a quarter of the window. */
const PAN_BUTTON_FRACTION = 0.25;

const btn =
  "inline-flex h-9 min-w-9 items-center justify-center rounded-md border px-2 text-sm font-medium " +
  "border-[var(--gd-border)] bg-[var(--gd-surface)] text-[var(--gd-surface-fg)] hover:brightness-95 " +
  "focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-[var(--gd-focus)] disabled:opacity-40";
const btnPressed = "aria-pressed:bg-[var(--gd-surface-fg)] aria-pressed:text-[var(--gd-surface)]";

export function TimelineControls({
  title,
  titleId,
  range,
  onRangeChange,
  win,
  following,
  rangeMs,
  dispatch,
}: {
  title: string;
  titleId: string;
  range: TimeRange;
  onRangeChange: (range: TimeRange) => void;
  win: TimeWindow;
  following: boolean;
  rangeMs: number;
  dispatch: (action: ViewAction) => void;
}) {
  const span = win.toMs - win.fromMs;
  return (
    <div className="flex flex-wrap items-center gap-2">
      <h3 id={titleId} className="mr-auto text-sm font-semibold">
        {title}
      </h3>
      <div role="group" aria-label="Time range" className="flex gap-1">
        {TIME_RANGES.map((r) => (
          <button key={r} type="button" className={`${btn} ${btnPressed}`} aria-pressed={r === range} onClick={() => onRangeChange(r)}>
            {RANGE_LABEL[r]}
          </button>
        ))}
      </div>
      <div role="group" aria-label="Zoom and pan" className="flex gap-1">
        <button
          type="button"
          className={btn}
          aria-label="Pan earlier"
          title="Pan earlier (←)"
          onClick={() => dispatch({ type: "pan", deltaMs: -span * PAN_BUTTON_FRACTION })}
        >
          <span aria-hidden="true">◀</span>
        </button>
        <button
          type="button"
          className={btn}
          aria-label="Zoom out"
          title="Zoom out (−)"
          onClick={() => dispatch({ type: "zoom", factor: 2 })}
          disabled={span >= rangeMs}
        >
          <span aria-hidden="true">−</span>
        </button>
        <button type="button" className={btn} aria-label="Zoom in" title="Zoom in (+)" onClick={() => dispatch({ type: "zoom", factor: 0.5 })}>
          <span aria-hidden="true">+</span>
        </button>
        <button
          type="button"
          className={btn}
          aria-label="Pan later"
          title="Pan later (→)"
          onClick={() => dispatch({ type: "pan", deltaMs: span * PAN_BUTTON_FRACTION })}
          disabled={following}
        >
          <span aria-hidden="true">▶</span>
        </button>
        <button
          type="button"
          className={`${btn} ${btnPressed} gap-1.5`}
          aria-pressed={following && span === rangeMs}
          title="Follow now over the whole range (L)"
          onClick={() => dispatch({ type: "live" })}
        >
          <span aria-hidden="true" className={`inline-block h-2 w-2 rounded-full ${following ? "bg-[var(--gd-state-running)]" : "bg-[var(--gd-axis)]"}`} />
          Live
        </button>
      </div>
    </div>
  );
}
