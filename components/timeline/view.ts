/**
 * The timeline's view window: which span of time is on screen, and whether it follows "now".
 * A small reducer so zoom/pan rules are tested without a browser.
 *
 * Rules: the window stays inside the loaded range [now - range, now]; zooming keeps the
 * point under the pointer (or the centre) in place; while following, zoom keeps the right
 * edge at now; panning away from now stops following, panning back to now resumes it.
 */

export type TimeRange = "15m" | "1h" | "6h" | "24h";
export const TIME_RANGES: readonly TimeRange[] = ["15m", "1h", "6h", "24h"];
export const RANGE_MS: Readonly<Record<TimeRange, number>> = {
  "15m": 15 * 60_000,
  "1h": 60 * 60_000,
  "6h": 6 * 60 * 60_000,
  "24h": 24 * 60 * 60_000,
};
export const RANGE_LABEL: Readonly<Record<TimeRange, string>> = {
  "15m": "15 min",
  "1h": "1 h",
  "6h": "6 h",
  "24h": "24 h",
};
/** Narrowest window: 10 s still shows a 1 Hz sample per ~30 px on a phone. */
export const MIN_SPAN_MS = 10_000;

export interface TimeWindow {
  fromMs: number;
  toMs: number;
}

export type ViewState = { follow: true; spanMs: number } | { follow: false; fromMs: number; toMs: number };

export type ViewAction =
  /** factor < 1 zooms in; anchorMs stays under the pointer (default: the window centre) */
  | { type: "zoom"; factor: number; anchorMs?: number }
  /** positive moves the window later in time */
  | { type: "pan"; deltaMs: number }
  /** show exactly this window (drag gestures compute it from where the drag began) */
  | { type: "set"; fromMs: number; toMs: number }
  | { type: "live" };

export interface ViewContext {
  nowMs: number;
  rangeMs: number;
}

export function followView(rangeMs: number): ViewState {
  return { follow: true, spanMs: rangeMs };
}

export function resolveWindow(view: ViewState, nowMs: number): TimeWindow {
  return view.follow ? { fromMs: nowMs - view.spanMs, toMs: nowMs } : { fromMs: view.fromMs, toMs: view.toMs };
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Keep the window inside [now - range, now], its span inside [MIN_SPAN_MS, range]; follow when it touches now. */
function settle(fromMs: number, toMs: number, ctx: ViewContext): ViewState {
  const maxSpan = Math.max(ctx.rangeMs, MIN_SPAN_MS);
  const span = clamp(toMs - fromMs, MIN_SPAN_MS, maxSpan);
  const earliest = ctx.nowMs - maxSpan;
  let from = clamp(fromMs, earliest, ctx.nowMs - span);
  let to = from + span;
  if (to >= ctx.nowMs) return { follow: true, spanMs: span };
  if (from < earliest) {
    from = earliest;
    to = from + span;
  }
  return { follow: false, fromMs: from, toMs: to };
}

export function reduceView(view: ViewState, action: ViewAction, ctx: ViewContext): ViewState {
  const w = resolveWindow(view, ctx.nowMs);
  const span = w.toMs - w.fromMs;
  switch (action.type) {
    case "live":
      return followView(ctx.rangeMs);
    case "zoom": {
      if (!(action.factor > 0)) return view;
      const newSpan = clamp(span * action.factor, MIN_SPAN_MS, Math.max(ctx.rangeMs, MIN_SPAN_MS));
      if (view.follow) return { follow: true, spanMs: newSpan };
      const anchor = clamp(action.anchorMs ?? (w.fromMs + w.toMs) / 2, w.fromMs, w.toMs);
      const from = anchor - ((anchor - w.fromMs) * newSpan) / span;
      return settle(from, from + newSpan, ctx);
    }
    case "pan": {
      if (action.deltaMs === 0) return view;
      // Panning towards the future while following changes nothing.
      if (view.follow && action.deltaMs > 0) return view;
      return settle(w.fromMs + action.deltaMs, w.toMs + action.deltaMs, ctx);
    }
    case "set":
      return settle(action.fromMs, action.toMs, ctx);
  }
}
