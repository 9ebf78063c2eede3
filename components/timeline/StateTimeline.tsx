"use client";
/**
 * State timeline: one swimlane of a unit's ActiveState/SubState over time, with action markers.
 *
 * Self-contained: owns its view window (zoom/pan/follow-now) and reports it through
 * onWindowChange so the GPU memory chart below can draw the same span at the same pixels
 * (both use TIME_GUTTER unless told otherwise).
 *
 * Interaction: drag (mouse or one finger) pans; pinch or Ctrl/⌘+wheel zooms around the
 * pointer; horizontal wheel pans; plain vertical wheel scrolls the page (a timeline that
 * captures the wheel traps people scrolling past it). Keyboard on the plot: ←/→ pan
 * (Shift: a half window), +/− zoom, L or End = live. Segments, spans without an agent and
 * markers are one tab stop each (roving focus: ←/→/Home/End move between them), Enter pins the
 * tooltip, Esc closes it.
 *
 * Spans in which no agent watched the host (`unobserved`) are a grey, hatched veil over the lane:
 * the states below them were rebuilt afterwards from systemd's timestamps (no substates), so
 * they stay visible but read as second-hand. Their handle in the marker row carries the tooltip.
 */
import { useElementWidth } from "@/components/useElementWidth";
import { useCallback, useEffect, useEffectEvent, useId, useMemo, useRef, useState } from "react";
import type { KeyboardEvent as ReactKeyboardEvent, PointerEvent as ReactPointerEvent, ReactNode } from "react";
import type { ObservationGap, UnitTransition } from "@/server/contract/types";
import { formatDuration, formatSystemdTimestamp, formatTime } from "@/server/contract/format";
import { buildSegments, segmentDurationMs, summarizeSegments, type CurrentStateFallback, type TimelineSegment } from "./segments";
import { STATE_STYLE_KEYS, stateStyle, type StatePattern, type StateStyle } from "./stateStyle";
import {
  CHAR_PX,
  clusterBreakdown,
  layoutGaps,
  layoutSegments,
  timeScale,
  TIME_GUTTER,
  type ClusterBox,
  type GapBox,
  type TimeGutter,
  type TimeScale,
} from "./layout";
import { timeTicks } from "./ticks";
import { RANGE_LABEL, RANGE_MS, TIME_RANGES, followView, reduceView, resolveWindow, type TimeRange, type ViewAction, type ViewState } from "./view";

export type { TimeRange } from "./view";

/** Someone acted on the unit (from the audit log). */
export interface ActionMarker {
  atMs: number;
  /** who: user name */
  user: string;
  /** what: start | stop | restart | reset-failed | kill … */
  action: string;
  reason?: string;
  /** systemd's job result when known: done | failed | timeout | canceled … */
  jobResult?: string;
  auditId?: string | number;
  /** link to the audit entry, e.g. /audit?id=42 */
  href?: string;
}

export interface StateTimelineProps {
  transitions: readonly UnitTransition[];
  markers?: readonly ActionMarker[];
  range: TimeRange;
  onRangeChange: (range: TimeRange) => void;
  /** The clock; the parent ticks it (≈1 s) so the timeline keeps moving. */
  nowMs: number;
  /** Called whenever the visible window changes (also on every tick while following now). */
  onWindowChange?: (fromMs: number, toMs: number, following: boolean) => void;
  /** For labels: "State timeline of vllm.service". */
  unitName?: string;
  /** Current state to show when there are no transitions yet. */
  current?: CurrentStateFallback;
  /** Spans in which no agent watched the host (oldest first): drawn as a hatched veil over the lane. */
  unobserved?: readonly ObservationGap[];
  /** Must match the chart's gutter for the time axes to line up. */
  gutter?: TimeGutter;
  /** A time hovered elsewhere (the chart): drawn as a hairline. */
  hoverMs?: number | null;
  onHoverMs?: (ms: number | null) => void;
  /** IANA zone for labels; default: the browser's. */
  timeZone?: string;
  /** Width to render with before the first measurement (server render, tests). Default: render after measuring. */
  initialWidth?: number;
  className?: string;
}

const MARKER_ROW = 20;
const LANE = 44;
const AXIS = 22;
const HEIGHT = MARKER_ROW + LANE + AXIS;
const LANE_TOP = MARKER_ROW;

type TipKind = "segment" | "marker" | "gap";
type Tip = { kind: TipKind; index: number; pinned: boolean };

const NO_GAPS: readonly ObservationGap[] = [];

const FAILED_JOB_RESULTS = new Set(["failed", "timeout", "canceled", "dependency"]);

function markerLabel(m: ActionMarker, timeZone?: string): string {
  const parts = [`${m.action} by ${m.user} at ${formatTime(m.atMs, { timeZone })}`];
  if (m.reason) parts.push(`reason: ${m.reason}`);
  if (m.jobResult) parts.push(`job result: ${m.jobResult}`);
  return parts.join(", ");
}

function segmentLabel(s: TimelineSegment, style: StateStyle, nowMs: number, timeZone?: string): string {
  const d = segmentDurationMs(s, nowMs);
  const from = s.realStartMs == null ? "before the recorded history" : formatTime(s.realStartMs, { timeZone });
  const to = s.open ? "now" : formatTime(s.realEndMs ?? s.endMs, { timeZone });
  return `${style.label} from ${from} to ${to}${d == null ? "" : `, ${s.open ? "so far " : ""}${formatDuration(d)}`}${s.result && s.result !== "success" ? `, result ${s.result}` : ""}`;
}

/** What a span without an agent means, for its label and tooltip. */
const GAP_MEANING = "states rebuilt from systemd's timestamps, substates not observed";

/** "Agent not running 14:02:10 – 14:07:55 (5 min 45 s): states rebuilt …": the whole span, also when clipped. */
function gapLabel(g: { fromMs: number; toMs: number }, timeZone?: string): string {
  return `Agent not running ${formatTime(g.fromMs, { timeZone })} – ${formatTime(g.toMs, { timeZone })} (${formatDuration(g.toMs - g.fromMs)}): ${GAP_MEANING}`;
}

/** SVG pattern tiles drawn over a state's fill colour. */
function PatternDefs({ idPrefix }: { idPrefix: string }) {
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

/** A state's fill + pattern + outline in a box, used by segments and the legend swatches. */
function StateShape({ idPrefix, style, x, y, width, height }: { idPrefix: string; style: StateStyle; x: number; y: number; width: number; height: number }) {
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

const btn =
  "inline-flex h-9 min-w-9 items-center justify-center rounded-md border px-2 text-sm font-medium " +
  "border-[var(--gd-border)] bg-[var(--gd-surface)] text-[var(--gd-surface-fg)] hover:brightness-95 " +
  "focus-visible:outline-2 focus-visible:outline-offset-1 focus-visible:outline-[var(--gd-focus)] disabled:opacity-40";
const btnPressed = "aria-pressed:bg-[var(--gd-surface-fg)] aria-pressed:text-[var(--gd-surface)]";

export function StateTimeline(props: StateTimelineProps) {
  const {
    transitions,
    markers = [],
    range,
    onRangeChange,
    nowMs,
    onWindowChange,
    unitName,
    current,
    unobserved = NO_GAPS,
    gutter = TIME_GUTTER,
    hoverMs = null,
    onHoverMs,
    timeZone,
    initialWidth,
    className,
  } = props;
  const rawId = useId();
  const idPrefix = `gdtl${rawId.replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const titleId = `${idPrefix}-title`;
  const helpId = `${idPrefix}-help`;

  // --- size --------------------------------------------------------------------------
  const [boxRef, width] = useElementWidth(initialWidth);
  const plotRef = useRef<HTMLDivElement | null>(null);

  // --- view window ---------------------------------------------------------------------
  const rangeMs = RANGE_MS[range];
  const [viewState, setViewState] = useState<{ range: TimeRange; view: ViewState }>(() => ({ range, view: followView(rangeMs) }));
  // A new range resets the view to following now over the whole range.
  const view = viewState.range === range ? viewState.view : followView(rangeMs);
  const win = resolveWindow(view, nowMs);
  const following = view.follow;

  const dispatch = (action: ViewAction) =>
    setViewState((prev) => {
      const base = prev.range === range ? prev.view : followView(rangeMs);
      return { range, view: reduceView(base, action, { nowMs, rangeMs }) };
    });

  // Report the window when it changes; the callback itself may be a new function each render.
  const reportWindow = useEffectEvent((fromMs: number, toMs: number, follow: boolean) => onWindowChange?.(fromMs, toMs, follow));
  useEffect(() => {
    reportWindow(win.fromMs, win.toMs, following);
  }, [win.fromMs, win.toMs, following]);

  // --- data ------------------------------------------------------------------------------
  const segments = useMemo(() => buildSegments(transitions, win.fromMs, win.toMs, nowMs, current), [transitions, win.fromMs, win.toMs, nowMs, current]);
  const scale: TimeScale = useMemo(
    () => timeScale(win.fromMs, win.toMs, width, { left: gutter.left, right: gutter.right }),
    [win.fromMs, win.toMs, width, gutter.left, gutter.right],
  );
  const boxes = useMemo(() => layoutSegments(segments, scale), [segments, scale]);
  const gapBoxes = useMemo(() => layoutGaps(unobserved, scale), [unobserved, scale]);
  const visibleMarkers = useMemo(
    () =>
      markers
        .map((m, i) => ({ m, i }))
        .filter(({ m }) => m.atMs >= win.fromMs && m.atMs <= win.toMs)
        .sort((a, b) => a.m.atMs - b.m.atMs),
    [markers, win.fromMs, win.toMs],
  );
  const ticks = useMemo(
    () => (width > 0 ? timeTicks(win.fromMs, win.toMs, scale.width, { timeZone, labelRoomPx: { left: gutter.left, right: gutter.right } }) : []),
    [win.fromMs, win.toMs, scale.width, width, timeZone, gutter.left, gutter.right],
  );
  const summary = useMemo(() => summarizeSegments(segments, nowMs), [segments, nowMs]);

  // --- tooltip & roving focus ---------------------------------------------------------------
  const [tip, setTip] = useState<Tip | null>(null);
  const [segFocus, setSegFocus] = useState<number | null>(null);
  const [markerFocus, setMarkerFocus] = useState<number | null>(null);
  const [gapFocus, setGapFocus] = useState<number | null>(null);
  const segRefs = useRef<(SVGGElement | null)[]>([]);
  const markerRefs = useRef<(SVGGElement | null)[]>([]);
  const gapRefs = useRef<(SVGGElement | null)[]>([]);
  const rovingSeg = segFocus != null && segFocus < boxes.length ? segFocus : boxes.length - 1;
  const rovingMarker = markerFocus != null && markerFocus < visibleMarkers.length ? markerFocus : visibleMarkers.length - 1;
  const rovingGap = gapFocus != null && gapFocus < gapBoxes.length ? gapFocus : gapBoxes.length - 1;
  const countOf = (kind: TipKind) => (kind === "segment" ? boxes.length : kind === "marker" ? visibleMarkers.length : gapBoxes.length);
  const tipValid = tip && tip.index < countOf(tip.kind) ? tip : null;

  const showTip = useCallback((next: Tip | null) => {
    setTip((prev) => {
      // A pinned tooltip stays until closed or replaced by another pinned one.
      if (prev?.pinned && next && !next.pinned) return prev;
      if (prev?.pinned && next === null) return prev;
      return next;
    });
  }, []);

  /** Click pins an item's tooltip; clicking the pinned one again closes it. */
  const togglePinned = (kind: TipKind, index: number) =>
    setTip((prev) => (prev?.pinned && prev.kind === kind && prev.index === index ? null : { kind, index, pinned: true }));

  /** Focus, hover and click handlers of one tooltip-bearing item (segment, marker or gap). */
  const tipTarget = (kind: TipKind, index: number, setFocus: (i: number) => void) => ({
    onFocus: () => {
      setFocus(index);
      showTip({ kind, index, pinned: false });
    },
    onBlur: () => showTip(null),
    onMouseEnter: () => showTip({ kind, index, pinned: false }),
    onMouseLeave: () => showTip(null),
    onClick: () => togglePinned(kind, index),
  });

  const focusSegment = (i: number) => {
    const j = Math.max(0, Math.min(boxes.length - 1, i));
    setSegFocus(j);
    segRefs.current[j]?.focus();
  };
  const focusMarker = (i: number) => {
    const j = Math.max(0, Math.min(visibleMarkers.length - 1, i));
    setMarkerFocus(j);
    markerRefs.current[j]?.focus();
  };
  const focusGap = (i: number) => {
    const j = Math.max(0, Math.min(gapBoxes.length - 1, i));
    setGapFocus(j);
    gapRefs.current[j]?.focus();
  };

  // --- keyboard --------------------------------------------------------------------------
  const onKeyDown = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    const target = e.target as Element;
    const segIdx = target.getAttribute?.("data-seg");
    const markerIdx = target.getAttribute?.("data-marker");
    const gapIdx = target.getAttribute?.("data-gap");
    const span = win.toMs - win.fromMs;
    const item: { kind: TipKind; i: number } | null =
      segIdx != null
        ? { kind: "segment", i: Number(segIdx) }
        : markerIdx != null
          ? { kind: "marker", i: Number(markerIdx) }
          : gapIdx != null
            ? { kind: "gap", i: Number(gapIdx) }
            : null;
    if (item && (e.key === "ArrowLeft" || e.key === "ArrowRight" || e.key === "Home" || e.key === "End")) {
      const count = countOf(item.kind);
      const next = e.key === "Home" ? 0 : e.key === "End" ? count - 1 : item.i + (e.key === "ArrowLeft" ? -1 : 1);
      if (item.kind === "segment") focusSegment(next);
      else if (item.kind === "marker") focusMarker(next);
      else focusGap(next);
      e.preventDefault();
      return;
    }
    if (item && (e.key === "Enter" || e.key === " ")) {
      togglePinned(item.kind, item.i);
      e.preventDefault();
      return;
    }
    switch (e.key) {
      case "ArrowLeft":
        dispatch({ type: "pan", deltaMs: -span * (e.shiftKey ? 0.5 : 0.1) });
        break;
      case "ArrowRight":
        dispatch({ type: "pan", deltaMs: span * (e.shiftKey ? 0.5 : 0.1) });
        break;
      case "+":
      case "=":
        dispatch({ type: "zoom", factor: 0.5 });
        break;
      case "-":
      case "_":
        dispatch({ type: "zoom", factor: 2 });
        break;
      case "l":
      case "L":
      case "End":
        dispatch({ type: "live" });
        break;
      case "Escape":
        if (!tipValid) return;
        setTip(null);
        break;
      default:
        return;
    }
    e.preventDefault();
  };

  // --- pointer: drag to pan, two fingers to zoom ---------------------------------------------
  const pointers = useRef(new Map<number, { x: number }>());
  const gesture = useRef<{
    startWin: { fromMs: number; toMs: number };
    startX: number;
    startDist: number;
    startMid: number;
    dragging: boolean;
  } | null>(null);

  const localX = (clientX: number) => clientX - (plotRef.current?.getBoundingClientRect().left ?? 0);

  const beginGesture = () => {
    const pts = [...pointers.current.values()];
    const startX = pts[0]?.x ?? 0;
    const dist = pts.length >= 2 ? Math.abs(pts[0]!.x - pts[1]!.x) : 0;
    const mid = pts.length >= 2 ? (pts[0]!.x + pts[1]!.x) / 2 : startX;
    gesture.current = { startWin: { ...win }, startX, startDist: dist, startMid: mid, dragging: pts.length >= 2 };
  };

  const onPointerDown = (e: ReactPointerEvent<HTMLDivElement>) => {
    if (e.pointerType === "mouse" && e.button !== 0) return;
    pointers.current.set(e.pointerId, { x: localX(e.clientX) });
    beginGesture();
  };

  const onPointerMove = (e: ReactPointerEvent<HTMLDivElement>) => {
    const x = localX(e.clientX);
    if (!pointers.current.has(e.pointerId)) {
      if (e.pointerType === "mouse" && onHoverMs && x >= scale.left && x <= scale.left + scale.width) onHoverMs(scale.ms(x));
      return;
    }
    pointers.current.set(e.pointerId, { x });
    const g = gesture.current;
    if (!g) return;
    const span = g.startWin.toMs - g.startWin.fromMs;
    const msPerPx = span / scale.width;
    const pts = [...pointers.current.values()];
    if (pts.length >= 2 && g.startDist > 10) {
      const dist = Math.max(10, Math.abs(pts[0]!.x - pts[1]!.x));
      const mid = (pts[0]!.x + pts[1]!.x) / 2;
      const newSpan = (span * g.startDist) / dist;
      const anchorMs = g.startWin.fromMs + ((g.startMid - scale.left) / scale.width) * span;
      const fromMs = anchorMs - ((mid - scale.left) / scale.width) * newSpan;
      dispatch({ type: "set", fromMs, toMs: fromMs + newSpan });
      return;
    }
    const dx = x - g.startX;
    if (!g.dragging && Math.abs(dx) < 5) return;
    if (!g.dragging) {
      g.dragging = true;
      // Capture only once it is a drag, so a plain click still reaches the segment under it.
      plotRef.current?.setPointerCapture?.(e.pointerId);
    }
    dispatch({ type: "set", fromMs: g.startWin.fromMs - dx * msPerPx, toMs: g.startWin.toMs - dx * msPerPx });
  };

  const endPointer = (e: ReactPointerEvent<HTMLDivElement>) => {
    pointers.current.delete(e.pointerId);
    if (pointers.current.size === 0) gesture.current = null;
    else beginGesture();
  };

  // Native wheel listener: React's is passive, and zoom must preventDefault.
  const onWheel = useEffectEvent((e: WheelEvent) => {
    const x = localX(e.clientX);
    const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    if (e.ctrlKey || e.metaKey) {
      e.preventDefault();
      const factor = Math.exp(Math.max(-1, Math.min(1, e.deltaY * unit * 0.01)));
      dispatch({ type: "zoom", factor, anchorMs: scale.ms(Math.max(scale.left, Math.min(scale.left + scale.width, x))) });
    } else if (Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      e.preventDefault();
      dispatch({ type: "pan", deltaMs: e.deltaX * unit * ((win.toMs - win.fromMs) / scale.width) });
    }
  });
  useEffect(() => {
    const el = plotRef.current;
    if (!el) return;
    const listener = (e: WheelEvent) => onWheel(e);
    el.addEventListener("wheel", listener, { passive: false });
    return () => el.removeEventListener("wheel", listener);
  }, []);

  // --- render ----------------------------------------------------------------------------
  const title = unitName ? `State timeline of ${unitName}` : "State timeline";
  const windowText = `${formatTime(win.fromMs, { timeZone, seconds: false, date: "auto", relativeToMs: nowMs })} to ${following ? "now" : formatTime(win.toMs, { timeZone, seconds: false, date: "auto", relativeToMs: nowMs })}`;
  const measured = width > 0;
  const nowX = nowMs >= win.fromMs && nowMs <= win.toMs ? scale.x(nowMs) : null;
  const hoverX = hoverMs != null && hoverMs >= win.fromMs && hoverMs <= win.toMs ? scale.x(hoverMs) : null;
  const gapSummary =
    gapBoxes.length === 0 ? "" : ` No agent was running during ${gapBoxes.length === 1 ? "1 span" : `${gapBoxes.length} spans`} in view: ${GAP_MEANING}.`;
  const legendStyles = useMemo(() => {
    const seen = new Map<string, StateStyle>();
    for (const s of segments) {
      const st = stateStyle(s.activeState, s.subState);
      if (!seen.has(st.label)) seen.set(st.label, st);
    }
    // lifecycle order (inactive → start-pre → … → failed → auto-restart), not order of appearance
    const rank = (st: StateStyle) => STATE_STYLE_KEYS.indexOf(st.key);
    return [...seen.values()].sort((a, b) => rank(a) - rank(b) || a.label.localeCompare(b.label));
  }, [segments]);

  let tipBox: { x: number; content: ReactNode } | null = null;
  if (tipValid && width > 0) {
    if (tipValid.kind === "segment") {
      const b = boxes[tipValid.index]!;
      tipBox = {
        x: b.x + b.width / 2,
        content:
          b.kind === "segment" ? (
            <SegmentTip
              segment={b.segment}
              style={b.style}
              nowMs={nowMs}
              timeZone={timeZone}
              unobserved={overlapsGap(gapBoxes, b.segment.startMs, b.segment.endMs)}
            />
          ) : (
            <ClusterTip cluster={b} nowMs={nowMs} timeZone={timeZone} />
          ),
      };
    } else if (tipValid.kind === "gap") {
      const g = gapBoxes[tipValid.index]!;
      tipBox = { x: g.x + g.width / 2, content: <GapTip gap={g} nowMs={nowMs} timeZone={timeZone} /> };
    } else {
      const { m } = visibleMarkers[tipValid.index]!;
      tipBox = { x: scale.x(m.atMs), content: <MarkerTip marker={m} nowMs={nowMs} timeZone={timeZone} /> };
    }
  }

  return (
    <section className={`flex flex-col gap-2 ${className ?? ""}`} aria-labelledby={titleId}>
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
            onClick={() => dispatch({ type: "pan", deltaMs: -(win.toMs - win.fromMs) * 0.25 })}
          >
            <span aria-hidden="true">◀</span>
          </button>
          <button
            type="button"
            className={btn}
            aria-label="Zoom out"
            title="Zoom out (−)"
            onClick={() => dispatch({ type: "zoom", factor: 2 })}
            disabled={win.toMs - win.fromMs >= rangeMs}
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
            onClick={() => dispatch({ type: "pan", deltaMs: (win.toMs - win.fromMs) * 0.25 })}
            disabled={following}
          >
            <span aria-hidden="true">▶</span>
          </button>
          <button
            type="button"
            className={`${btn} ${btnPressed} gap-1.5`}
            aria-pressed={following && win.toMs - win.fromMs === rangeMs}
            title="Follow now over the whole range (L)"
            onClick={() => dispatch({ type: "live" })}
          >
            <span aria-hidden="true" className={`inline-block h-2 w-2 rounded-full ${following ? "bg-[var(--gd-state-running)]" : "bg-[var(--gd-axis)]"}`} />
            Live
          </button>
        </div>
      </div>
      <p id={helpId} className="hidden text-xs text-[var(--gd-surface-muted)] sm:block">
        {`${measured ? `${windowText} · ` : ""}drag or ←/→ to pan · pinch, Ctrl+scroll or +/− to zoom · Tab to segments and markers, Enter for details`}
      </p>

      <div ref={boxRef} className="relative w-full" style={{ minHeight: HEIGHT }}>
        <div
          ref={plotRef}
          tabIndex={0}
          role="group"
          aria-roledescription="timeline"
          aria-label={measured ? `${title}, ${windowText}${following ? ", following now" : ""}. ${summary}${gapSummary}` : title}
          aria-describedby={helpId}
          className="relative rounded-md outline-none select-none focus-visible:ring-2 focus-visible:ring-[var(--gd-focus)]"
          style={{ touchAction: "pan-y", height: HEIGHT }}
          onKeyDown={onKeyDown}
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={endPointer}
          onPointerCancel={endPointer}
          onPointerLeave={(e) => {
            if (e.pointerType === "mouse") onHoverMs?.(null);
          }}
          onDoubleClick={(e) => dispatch({ type: "zoom", factor: 0.5, anchorMs: scale.ms(localX(e.clientX)) })}
          onClick={(e) => {
            // A click on empty lane closes a pinned tooltip.
            if (!(e.target as Element).closest?.("[data-seg],[data-marker],[data-gap]")) setTip(null);
          }}
        >
          {width > 0 && (
            <svg width={width} height={HEIGHT} className="block overflow-visible" style={{ fontSize: 11 }}>
              <PatternDefs idPrefix={idPrefix} />
              {/* grid + axis */}
              <g aria-hidden="true">
                <rect x={scale.left} y={LANE_TOP} width={scale.width} height={LANE} style={{ fill: "var(--gd-state-unknown)" }} opacity={0.5} />
                {ticks.map((t) => {
                  const x = scale.x(t.atMs);
                  return (
                    <g key={t.atMs}>
                      <line x1={x} x2={x} y1={LANE_TOP} y2={LANE_TOP + LANE + 4} style={{ stroke: "var(--gd-grid)" }} />
                      <text x={x} y={LANE_TOP + LANE + 16} textAnchor="middle" style={{ fill: "var(--gd-axis)", fontWeight: t.isDayStart ? 600 : 400 }}>
                        {t.label}
                      </text>
                    </g>
                  );
                })}
                <text x={scale.left - 6} y={LANE_TOP + LANE / 2 + 4} textAnchor="end" style={{ fill: "var(--gd-axis)" }}>
                  state
                </text>
              </g>

              {/* segments: one tab stop, arrows move between them */}
              <g role="list" aria-label="States in view">
                {boxes.map((b, i) => {
                  const active = tipValid?.kind === "segment" && tipValid.index === i;
                  return (
                    <g
                      key={b.kind === "segment" ? `s${b.segment.startUsec ?? "start"}-${i}` : `c${b.startMs}-${i}`}
                      ref={(el) => {
                        segRefs.current[i] = el;
                      }}
                      role="listitem"
                      aria-label={b.kind === "segment" ? segmentLabel(b.segment, b.style, nowMs, timeZone) : clusterLabel(b, timeZone)}
                      tabIndex={i === rovingSeg ? 0 : -1}
                      data-seg={i}
                      className="cursor-pointer outline-none"
                      {...tipTarget("segment", i, setSegFocus)}
                    >
                      <StateShape idPrefix={idPrefix} style={b.style} x={b.x} y={LANE_TOP} width={b.width} height={LANE} />
                      {b.kind === "cluster" && (
                        // a comb along the bottom: "many changes here", in any colour scheme
                        <rect
                          x={b.x}
                          y={LANE_TOP + LANE - 7}
                          width={b.width}
                          height={7}
                          fill={`url(#${idPrefix}-vertical)`}
                          style={{ stroke: "var(--gd-surface-fg)" }}
                          strokeWidth={0.5}
                        />
                      )}
                      {b.label && (
                        <g aria-hidden="true">
                          <rect
                            x={b.x + b.width / 2 - (b.label.length * 6.4 + 6) / 2}
                            y={LANE_TOP + LANE / 2 - 8}
                            width={b.label.length * 6.4 + 6}
                            height={16}
                            rx={3}
                            style={{ fill: b.style.colorVar }}
                          />
                          <text x={b.x + b.width / 2} y={LANE_TOP + LANE / 2 + 4} textAnchor="middle" style={{ fill: b.style.textColorVar, fontWeight: 600 }}>
                            {b.label}
                          </text>
                        </g>
                      )}
                      {active && (
                        <rect
                          x={b.x - 1}
                          y={LANE_TOP - 1}
                          width={b.width + 2}
                          height={LANE + 2}
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

              {/* no agent watching: a veil over the lane that lets the rebuilt states below show
                  through and lets pointer events reach them; its handle in the marker row is the
                  focusable item with the tooltip */}
              {gapBoxes.length > 0 && (
                <g aria-hidden="true" pointerEvents="none" data-testid="gap-veils">
                  {gapBoxes.map((g) => (
                    <g key={`v${g.fromMs}`}>
                      <rect x={g.x} y={1} width={g.width} height={LANE_TOP + LANE - 1} style={{ fill: "var(--gd-gap-wash)" }} />
                      <rect x={g.x} y={1} width={g.width} height={LANE_TOP + LANE - 1} fill={`url(#${idPrefix}-gap)`} />
                      {!g.clippedStart && <line x1={g.x} x2={g.x} y1={1} y2={LANE_TOP + LANE} style={{ stroke: "var(--gd-gap-edge)" }} strokeDasharray="3 2" />}
                      {!g.clippedEnd && (
                        <line
                          x1={g.x + g.width}
                          x2={g.x + g.width}
                          y1={1}
                          y2={LANE_TOP + LANE}
                          style={{ stroke: "var(--gd-gap-edge)" }}
                          strokeDasharray="3 2"
                        />
                      )}
                    </g>
                  ))}
                </g>
              )}
              {gapBoxes.length > 0 && (
                <g role="list" aria-label="Times no agent was running, in view">
                  {gapBoxes.map((g, i) => {
                    const active = tipValid?.kind === "gap" && tipValid.index === i;
                    const text = fitGapText(g.width);
                    return (
                      <g
                        key={`g${g.fromMs}`}
                        ref={(el) => {
                          gapRefs.current[i] = el;
                        }}
                        role="listitem"
                        aria-label={gapLabel(g, timeZone)}
                        tabIndex={i === rovingGap ? 0 : -1}
                        data-gap={i}
                        className="cursor-pointer outline-none"
                        {...tipTarget("gap", i, setGapFocus)}
                      >
                        {/* hit area: the marker row only, so the states below stay hoverable */}
                        <rect x={g.x} y={0} width={Math.max(g.width, 8)} height={LANE_TOP} fill="transparent" />
                        {text && (
                          <g aria-hidden="true" pointerEvents="none">
                            <rect
                              x={g.x + g.width / 2 - (text.length * CHAR_PX + 6) / 2}
                              y={3}
                              width={text.length * CHAR_PX + 6}
                              height={14}
                              rx={3}
                              style={{ fill: "var(--gd-surface)", stroke: "var(--gd-gap-edge)" }}
                              strokeWidth={0.75}
                            />
                            <text x={g.x + g.width / 2} y={14} textAnchor="middle" style={{ fill: "var(--gd-surface-fg)", fontSize: 10, fontWeight: 600 }}>
                              {text}
                            </text>
                          </g>
                        )}
                        {active && (
                          <rect
                            x={g.x - 1}
                            y={0}
                            width={g.width + 2}
                            height={LANE_TOP + LANE + 1}
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
              )}

              {nowX != null && (
                <g aria-hidden="true" pointerEvents="none">
                  <line x1={nowX} x2={nowX} y1={LANE_TOP - 4} y2={LANE_TOP + LANE} style={{ stroke: "var(--gd-now)" }} strokeWidth={2} />
                </g>
              )}
              {hoverX != null && (
                <line
                  x1={hoverX}
                  x2={hoverX}
                  y1={0}
                  y2={LANE_TOP + LANE}
                  style={{ stroke: "var(--gd-hover)" }}
                  strokeDasharray="2 2"
                  pointerEvents="none"
                  aria-hidden="true"
                />
              )}

              {/* action markers */}
              <g role="list" aria-label="Actions in view">
                {visibleMarkers.map(({ m }, i) => {
                  const x = scale.x(m.atMs);
                  const failed = m.jobResult != null && FAILED_JOB_RESULTS.has(m.jobResult);
                  const color = failed ? "var(--gd-marker-failed)" : "var(--gd-marker)";
                  const active = tipValid?.kind === "marker" && tipValid.index === i;
                  return (
                    <g
                      key={`${m.auditId ?? m.atMs}-${i}`}
                      ref={(el) => {
                        markerRefs.current[i] = el;
                      }}
                      role="listitem"
                      aria-label={markerLabel(m, timeZone)}
                      tabIndex={i === rovingMarker ? 0 : -1}
                      data-marker={i}
                      className="cursor-pointer outline-none"
                      {...tipTarget("marker", i, setMarkerFocus)}
                    >
                      {/* wide hit area for fingers over the flag row only, so the lane below stays hoverable */}
                      <rect x={x - 8} y={0} width={18} height={LANE_TOP} fill="transparent" />
                      <line x1={x} x2={x} y1={2} y2={LANE_TOP + LANE} style={{ stroke: color }} strokeWidth={active ? 2.5 : 1.5} pointerEvents="none" />
                      <path d={`M${x},2 h10 l-3,4.5 l3,4.5 h-10 z`} style={{ fill: color, stroke: active ? "var(--gd-focus)" : "none" }} strokeWidth={1.5} />
                    </g>
                  );
                })}
              </g>
            </svg>
          )}
        </div>

        {tipBox && (
          <div
            role="tooltip"
            className="absolute z-20 w-max max-w-[min(24rem,calc(100%-8px))] rounded-md border p-2 text-xs shadow-lg"
            style={{
              top: HEIGHT - AXIS + 2,
              left: Math.max(4, Math.min(width - 4, tipBox.x)),
              // Shift left in proportion to x so the box never leaves the component.
              transform: `translateX(-${Math.round((Math.max(0, Math.min(width, tipBox.x)) / Math.max(1, width)) * 100)}%)`,
              background: "var(--gd-surface)",
              color: "var(--gd-surface-fg)",
              borderColor: "var(--gd-border)",
            }}
            onPointerDown={(e) => e.stopPropagation()}
            onKeyDown={(e) => {
              if (e.key !== "Escape") return;
              setTip(null);
              plotRef.current?.focus();
            }}
          >
            {tipBox.content}
            {tipValid?.pinned && (
              <button
                type="button"
                className="absolute top-1 right-1 rounded px-1 text-[var(--gd-surface-muted)] hover:text-[var(--gd-surface-fg)]"
                aria-label="Close details"
                onClick={() => setTip(null)}
              >
                ×
              </button>
            )}
          </div>
        )}
      </div>

      {/* Everything below shows times. It renders once the box is measured (in the browser), so a
          server render in another time zone never disagrees with the first client render. */}
      {measured && (
        <>
          {/* legend: states in view, with the same fill and pattern */}
          <ul className="flex flex-wrap gap-x-3 gap-y-1 text-xs" aria-label="Legend">
            {legendStyles.map((s) => (
              <li key={s.label} className="flex items-center gap-1.5">
                <svg width={22} height={12} aria-hidden="true" className="shrink-0">
                  <StateShape idPrefix={idPrefix} style={s} x={0} y={0} width={22} height={12} />
                </svg>
                {s.label}
              </li>
            ))}
            {gapBoxes.length > 0 && (
              <li className="flex items-center gap-1.5" data-testid="legend-gap">
                <svg width={22} height={12} aria-hidden="true" className="shrink-0">
                  <rect x={0} y={0} width={22} height={12} style={{ fill: "var(--gd-gap-wash)" }} />
                  <rect x={0} y={0} width={22} height={12} fill={`url(#${idPrefix}-gap)`} />
                  <rect x={0.5} y={0.5} width={21} height={11} fill="none" style={{ stroke: "var(--gd-gap-edge)" }} strokeDasharray="3 2" />
                </svg>
                agent not running
              </li>
            )}
            {visibleMarkers.length > 0 && (
              <li className="flex items-center gap-1.5">
                <svg width={12} height={12} aria-hidden="true">
                  <path d="M1,1 h10 l-3,4.5 l3,4.5 h-10 z" style={{ fill: "var(--gd-marker)" }} />
                </svg>
                action (who, what, why)
              </li>
            )}
            {nowX != null && (
              <li className="flex items-center gap-1.5">
                <span aria-hidden="true" className="inline-block h-3 w-0.5" style={{ background: "var(--gd-now)" }} />
                now
              </li>
            )}
          </ul>

          {/* the same facts for screen readers, as tables */}
          <div className="sr-only">
            <table>
              <caption>{`${title}, ${windowText}`}</caption>
              <thead>
                <tr>
                  <th scope="col">State</th>
                  <th scope="col">From</th>
                  <th scope="col">To</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Result</th>
                </tr>
              </thead>
              <tbody>
                {boxes.map((b, i) => {
                  // One row per drawn box: a restart loop at 24 h is one row, not thousands.
                  if (b.kind === "cluster") {
                    return (
                      <tr key={i}>
                        <td>{`${b.segments.length} state changes: ${clusterBreakdown(b.segments)
                          .map((e) => `${e.style.label} ${e.count}×`)
                          .join(", ")}`}</td>
                        <td>{formatTime(b.startMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                        <td>{formatTime(b.endMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                        <td>{formatDuration(b.endMs - b.startMs)}</td>
                        <td>{`${b.segments.filter((s) => s.activeState === "failed").length} failed`}</td>
                      </tr>
                    );
                  }
                  const s = b.segment;
                  const d = segmentDurationMs(s, nowMs);
                  return (
                    <tr key={i}>
                      <td>{stateStyle(s.activeState, s.subState).label}</td>
                      <td>{s.realStartMs == null ? "before recorded history" : formatTime(s.realStartMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                      <td>{s.open ? "now (current)" : formatTime(s.realEndMs ?? s.endMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                      <td>{d == null ? "unknown" : formatDuration(d)}</td>
                      <td>
                        {s.result || "—"}
                        {s.inRestartCycle ? " (restart cycle)" : ""}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          {gapBoxes.length > 0 && (
            <div className="sr-only">
              <table>
                <caption>{`Times no agent was running, in view: ${GAP_MEANING}; no GPU memory samples`}</caption>
                <thead>
                  <tr>
                    <th scope="col">From</th>
                    <th scope="col">To</th>
                    <th scope="col">Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {gapBoxes.map((g) => (
                    <tr key={g.fromMs}>
                      <td>{formatTime(g.fromMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                      <td>{formatTime(g.toMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                      <td>{formatDuration(g.toMs - g.fromMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {visibleMarkers.length > 0 && (
            <div className="sr-only">
              <table>
                <caption>{`Actions on ${unitName ?? "the unit"} in view`}</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">User</th>
                    <th scope="col">Action</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Job result</th>
                  </tr>
                </thead>
                <tbody>
                  {visibleMarkers.map(({ m }, i) => (
                    <tr key={i}>
                      <td>{formatTime(m.atMs, { timeZone, date: "auto", relativeToMs: nowMs })}</td>
                      <td>{m.user}</td>
                      <td>{m.href ? <a href={m.href}>{m.action}</a> : m.action}</td>
                      <td>{m.reason ?? "—"}</td>
                      <td>{m.jobResult ?? "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      )}
    </section>
  );
}

function TipRow({ name, children }: { name: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-[var(--gd-surface-muted)]">{name}</dt>
      <dd className="m-0">{children}</dd>
    </>
  );
}

function SegmentTip({
  segment: s,
  style,
  nowMs,
  timeZone,
  unobserved,
}: {
  segment: TimelineSegment;
  style: StateStyle;
  nowMs: number;
  timeZone?: string;
  unobserved?: boolean;
}) {
  const d = segmentDurationMs(s, nowMs);
  const endMs = s.realEndMs;
  const exact = (usec: number | null) =>
    usec != null && <div className="font-mono text-[10px] text-[var(--gd-surface-muted)]">{`${formatSystemdTimestamp(usec, timeZone)} · ${usec} µs`}</div>;
  return (
    <div className="pr-4">
      <div className="mb-1 flex items-center gap-2">
        <span className={style.className}>{style.label}</span>
        {s.open && <span className="text-[var(--gd-surface-muted)]">current</span>}
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="From">
          {s.realStartMs == null ? (
            "before the recorded history"
          ) : (
            <>
              {formatTime(s.realStartMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}
              {exact(s.startUsec)}
            </>
          )}
        </TipRow>
        <TipRow name="To">
          {endMs == null ? (
            "now (still in this state)"
          ) : (
            <>
              {formatTime(endMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}
              {exact(s.endUsec)}
            </>
          )}
        </TipRow>
        <TipRow name={s.open ? "So far" : "Lasted"}>{d == null ? "unknown (began before the recorded history)" : formatDuration(d)}</TipRow>
        {s.result && <TipRow name="Result">{s.result}</TipRow>}
        {unobserved && <TipRow name="Observed">no agent running for part or all of it: rebuilt from systemd&apos;s timestamps</TipRow>}
        {s.inRestartCycle && <TipRow name="Restart=">step of an automatic restart cycle</TipRow>}
        {s.mainPid || s.controlPid || s.nRestarts ? (
          <TipRow name="Process">
            {[s.mainPid ? `main PID ${s.mainPid}` : null, s.controlPid ? `control PID ${s.controlPid}` : null, s.nRestarts ? `${s.nRestarts} restarts` : null]
              .filter(Boolean)
              .join(" · ")}
          </TipRow>
        ) : null}
      </dl>
    </div>
  );
}

/** Whether [startMs, endMs] shares time with one of the (window-clipped) spans without an agent. */
function overlapsGap(gaps: readonly GapBox[], startMs: number, endMs: number): boolean {
  return gaps.some((g) => g.startMs < endMs && g.endMs > startMs);
}

/** The handle's text, if the span is wide enough for it. */
function fitGapText(width: number): string | null {
  for (const t of ["agent not running", "no agent"]) if (t.length * CHAR_PX + 10 <= width) return t;
  return null;
}

function GapTip({ gap: g, nowMs, timeZone }: { gap: GapBox; nowMs: number; timeZone?: string }) {
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">Agent not running</div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="From">{formatTime(g.fromMs, { timeZone, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="To">{formatTime(g.toMs, { timeZone, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="Lasted">{formatDuration(g.toMs - g.fromMs)}</TipRow>
      </dl>
      <p className="mt-1 max-w-72">
        No agent watched the host. The states in this span were rebuilt from systemd&apos;s timestamps afterwards; substates were not observed and GPU memory
        was not sampled.
      </p>
    </div>
  );
}

function clusterLabel(c: ClusterBox, timeZone?: string): string {
  const parts = clusterBreakdown(c.segments).map((e) => `${e.style.label} ${e.count}×`);
  return `${c.segments.length} state changes from ${formatTime(c.startMs, { timeZone })} to ${formatTime(c.endMs, { timeZone })}: ${parts.join(", ")}. Zoom in to see them.`;
}

function ClusterTip({ cluster: c, nowMs, timeZone }: { cluster: ClusterBox; nowMs: number; timeZone?: string }) {
  const failed = c.segments.filter((s) => s.activeState === "failed").length;
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">{`${c.segments.length} state changes, too close to draw apart`}</div>
      <div className="mb-1">
        {`${formatTime(c.startMs, { timeZone, date: "auto", relativeToMs: nowMs })} – ${formatTime(c.endMs, { timeZone })} (${formatDuration(c.endMs - c.startMs)})`}
        {failed > 0 && <span className="ml-1 font-semibold text-[var(--gd-marker-failed)]">{`· failed ${failed}×`}</span>}
      </div>
      <ul className="flex flex-col gap-0.5">
        {clusterBreakdown(c.segments).map((e) => (
          <li key={e.style.label} className="flex items-center gap-2">
            <span className={e.style.className}>{e.style.label}</span>
            <span>{`${e.count}× · ${formatDuration(e.ms)}`}</span>
          </li>
        ))}
      </ul>
      <p className="mt-1 text-[var(--gd-surface-muted)]">Double-click, pinch or press + to zoom in.</p>
    </div>
  );
}

function MarkerTip({ marker: m, nowMs, timeZone }: { marker: ActionMarker; nowMs: number; timeZone?: string }) {
  return (
    <div className="pr-4">
      <div className="mb-1 font-semibold">
        {m.action} by {m.user}
      </div>
      <dl className="grid grid-cols-[auto_1fr] gap-x-2 gap-y-0.5">
        <TipRow name="At">{formatTime(m.atMs, { timeZone, millis: true, date: "auto", relativeToMs: nowMs })}</TipRow>
        <TipRow name="Reason">{m.reason ? m.reason : <span className="text-[var(--gd-surface-muted)]">none given</span>}</TipRow>
        {m.jobResult && <TipRow name="Job result">{m.jobResult}</TipRow>}
      </dl>
      {m.href && (
        <a className="mt-1 inline-block underline" href={m.href}>
          Audit entry{m.auditId != null ? ` #${m.auditId}` : ""} →
        </a>
      )}
    </div>
  );
}

export default StateTimeline;
