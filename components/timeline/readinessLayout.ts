/**
 * Readiness segments placed as boxes on the shared time scale (./layout.ts), and the words their
 * items speak. Runs of segments too narrow to draw apart become one cluster box, as on the state
 * lane, so a restart loop at 24 h stays one tab stop.
 */
import { formatDuration, formatTime } from "@/server/contract/format";
import { CHAR_PX, CLUSTER_BELOW_PX, MIN_SEGMENT_PX, type TimeScale } from "./layout";
import { readinessDurationMs, readinessSegmentName, type ReadinessSegment } from "./readinessSegments";
import { readinessStyle, type ReadinessStyle } from "./readinessStyle";

export type ReadinessBox =
  | { kind: "segment"; segment: ReadinessSegment; style: ReadinessStyle; x: number; width: number; label: string | null }
  | { kind: "cluster"; segments: ReadinessSegment[]; style: ReadinessStyle; x: number; width: number; label: string | null; startMs: number; endMs: number };

function fit(width: number, ...candidates: string[]): string | null {
  for (const c of candidates) if (c.length * CHAR_PX + 10 <= width) return c;
  return null;
}

/** "loading weights 0/119" when it fits, else "loading weights", else nothing. */
function segmentText(s: ReadinessSegment, width: number): string | null {
  const name = readinessSegmentName(s);
  return fit(width, name, s.state === "loading" ? "loading" : name);
}

export function layoutReadiness(segments: readonly ReadinessSegment[], scale: TimeScale): ReadinessBox[] {
  const right = scale.left + scale.width;
  const place = (x0: number, x1: number) => {
    const width = Math.max(MIN_SEGMENT_PX, x1 - x0);
    return { x: Math.min(x0, right - width), width };
  };
  const out: ReadinessBox[] = [];
  let run: ReadinessSegment[] = [];
  const flush = () => {
    if (run.length === 1) {
      const segment = run[0]!;
      out.push({ kind: "segment", segment, style: readinessStyle(segment.state), ...place(scale.x(segment.startMs), scale.x(segment.endMs)), label: null });
    } else if (run.length > 1) {
      const startMs = run[0]!.startMs;
      const endMs = run.at(-1)!.endMs;
      const longest = [...run].sort((a, b) => b.endMs - b.startMs - (a.endMs - a.startMs))[0]!;
      const { x, width } = place(scale.x(startMs), scale.x(endMs));
      out.push({
        kind: "cluster",
        segments: run,
        style: readinessStyle(longest.state),
        x,
        width,
        startMs,
        endMs,
        label: fit(width, `${run.length} changes`, `${run.length}`),
      });
    }
    run = [];
  };
  for (const segment of segments) {
    const x0 = scale.x(segment.startMs);
    const x1 = scale.x(segment.endMs);
    if (x1 - x0 < CLUSTER_BELOW_PX) {
      run.push(segment);
      continue;
    }
    flush();
    const { x, width } = place(x0, x1);
    out.push({ kind: "segment", segment, style: readinessStyle(segment.state), x, width, label: segmentText(segment, width) });
  }
  flush();
  return out;
}

/** "loading weights from 10:34:32 to 10:34:41, 9.0 s" / "serving from 10:34:41 to now, so far 2 min 10 s, reason …" */
export function readinessLabel(s: ReadinessSegment, nowMs: number, timeZone?: string): string {
  const d = readinessDurationMs(s, nowMs);
  const from = s.realStartMs == null ? "before the recorded history" : formatTime(s.realStartMs, { timeZone });
  const to = s.open ? "now" : formatTime(s.realEndMs ?? s.endMs, { timeZone });
  return `${readinessSegmentName(s)} from ${from} to ${to}${d == null ? "" : `, ${s.open ? "so far " : ""}${formatDuration(d)}`}${s.reason ? `, ${s.reason}` : ""}`;
}

/** Per name in a cluster: how often, longest first. */
export function readinessBreakdown(segments: readonly ReadinessSegment[]): { name: string; style: ReadinessStyle; count: number; ms: number }[] {
  const by = new Map<string, { name: string; style: ReadinessStyle; count: number; ms: number }>();
  for (const s of segments) {
    const name = readinessSegmentName(s);
    const e = by.get(name) ?? { name, style: readinessStyle(s.state), count: 0, ms: 0 };
    e.count++;
    e.ms += s.endMs - s.startMs;
    by.set(name, e);
  }
  return [...by.values()].sort((a, b) => b.ms - a.ms || b.count - a.count);
}

export function readinessClusterLabel(b: Extract<ReadinessBox, { kind: "cluster" }>, timeZone?: string): string {
  const parts = readinessBreakdown(b.segments).map((e) => `${e.name} ${e.count}×`);
  return `${b.segments.length} readiness changes from ${formatTime(b.startMs, { timeZone })} to ${formatTime(b.endMs, { timeZone })}: ${parts.join(", ")}. Zoom in to see them.`;
}
