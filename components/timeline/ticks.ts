/**
 * Time-axis ticks shared by the state timeline and the GPU chart, so both axes show the same
 * instants at the same pixels. Ticks fall on round local-time values (14:05, 14:10 …).
 */
import { formatDay, formatTime } from "@/server/contract/format";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
/** Candidate spacings, each a divisor of a day so local-time ticks line up. */
const STEPS = [1 * S, 2 * S, 5 * S, 10 * S, 15 * S, 30 * S, 1 * M, 2 * M, 5 * M, 10 * M, 15 * M, 30 * M, 1 * H, 2 * H, 3 * H, 6 * H, 12 * H, 24 * H];

export interface TimeTick {
  atMs: number;
  label: string;
  /** local midnight: the label is the date */
  isDayStart: boolean;
}

export interface TickOptions {
  /** minimum pixels between ticks; default 72 (fits "14:05:30" at 11 px) */
  minSpacingPx?: number;
  /** IANA zone for labels and alignment; default local */
  timeZone?: string;
  /** minutes to add to UTC to get local time at an instant; default derived from timeZone or the runtime */
  utcOffsetMin?: (ms: number) => number;
  /**
   * Room beyond the plot edges for centred labels (the gutters); ticks whose label would be
   * cut off there are dropped. Default: unlimited.
   */
  labelRoomPx?: { left: number; right: number };
  /** estimated label glyph width, px (default 6.4 ≈ 11 px system sans) */
  charPx?: number;
}

/** Local UTC offset in minutes (east positive) at `ms`, for a zone or the runtime's local zone. */
export function utcOffsetMinutes(ms: number, timeZone?: string): number {
  if (!timeZone) return -new Date(ms).getTimezoneOffset();
  const dtf = offsetFormatter(timeZone);
  const parts: Record<string, string> = {};
  for (const p of dtf.formatToParts(new Date(ms))) parts[p.type] = p.value;
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour) % 24, Number(parts.minute), Number(parts.second));
  return Math.round((asUtc - Math.floor(ms / 1000) * 1000) / M);
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();
function offsetFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = offsetFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      hourCycle: "h23",
    });
    offsetFormatters.set(timeZone, f);
  }
  return f;
}

/** The tick spacing for a span drawn over widthPx pixels. */
export function tickStepMs(spanMs: number, widthPx: number, minSpacingPx = 72): number {
  if (!(spanMs > 0) || !(widthPx > 0)) return STEPS[STEPS.length - 1]!;
  for (const step of STEPS) if ((step / spanMs) * widthPx >= minSpacingPx) return step;
  return STEPS[STEPS.length - 1]!;
}

export function timeTicks(fromMs: number, toMs: number, widthPx: number, opts: TickOptions = {}): TimeTick[] {
  if (!(toMs > fromMs) || !(widthPx > 0)) return [];
  const step = tickStepMs(toMs - fromMs, widthPx, opts.minSpacingPx);
  const offset = opts.utcOffsetMin ?? ((ms: number) => utcOffsetMinutes(ms, opts.timeZone));
  const ticks: TimeTick[] = [];
  // Align in local time: a tick every `step` counted from local midnight. One offset for the
  // window; across a DST change the later ticks stay on whole hours anyway (labels are exact).
  const off = offset(fromMs) * M;
  for (let local = Math.ceil((fromMs + off) / step) * step; local - off <= toMs; local += step) {
    const at = local - off;
    const dayStart = local % (24 * H) === 0;
    const label = dayStart ? formatDay(at, opts.timeZone) : formatTime(at, { seconds: step < M, timeZone: opts.timeZone });
    if (opts.labelRoomPx) {
      const x = ((at - fromMs) / (toMs - fromMs)) * widthPx;
      const half = (label.length * (opts.charPx ?? 6.4)) / 2;
      if (x - half < -opts.labelRoomPx.left || x + half > widthPx + opts.labelRoomPx.right) continue;
    }
    ticks.push({ atMs: at, isDayStart: dayStart, label });
  }
  return ticks;
}
