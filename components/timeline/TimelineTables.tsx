/**
 * The timeline's facts for screen readers, as tables (visually hidden): the states in view, the
 * spans no agent watched, and the actions. One row per drawn box, so a restart loop at 24 h is
 * one row, not thousands.
 */
import { formatDuration, formatTime } from "@/server/contract/format";
import { clusterBreakdown, type GapBox, type LaneBox } from "./layout";
import { GAP_MEANING } from "./labels";
import type { ActionMarker } from "./markers";
import { segmentDurationMs } from "./segments";
import { stateStyle } from "./stateStyle";

interface TableProps {
  nowMs: number;
  timeZone?: string;
}

export function TimelineTables({
  caption,
  unitName,
  boxes,
  gapBoxes,
  markers,
  nowMs,
  timeZone,
}: TableProps & { caption: string; unitName?: string; boxes: readonly LaneBox[]; gapBoxes: readonly GapBox[]; markers: readonly ActionMarker[] }) {
  return (
    <>
      <StatesTable caption={caption} boxes={boxes} nowMs={nowMs} timeZone={timeZone} />
      {gapBoxes.length > 0 && <GapsTable gapBoxes={gapBoxes} nowMs={nowMs} timeZone={timeZone} />}
      {markers.length > 0 && <ActionsTable unitName={unitName} markers={markers} nowMs={nowMs} timeZone={timeZone} />}
    </>
  );
}

function StatesTable({ caption, boxes, nowMs, timeZone }: TableProps & { caption: string; boxes: readonly LaneBox[] }) {
  const at = (ms: number) => formatTime(ms, { timeZone, date: "auto", relativeToMs: nowMs });
  return (
    <div className="sr-only">
      <table>
        <caption>{caption}</caption>
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
            if (b.kind === "cluster") {
              return (
                <tr key={i}>
                  <td>{`${b.segments.length} state changes: ${clusterBreakdown(b.segments)
                    .map((e) => `${e.style.label} ${e.count}×`)
                    .join(", ")}`}</td>
                  <td>{at(b.startMs)}</td>
                  <td>{at(b.endMs)}</td>
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
                <td>{s.realStartMs == null ? "before recorded history" : at(s.realStartMs)}</td>
                <td>{s.open ? "now (current)" : at(s.realEndMs ?? s.endMs)}</td>
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
  );
}

function GapsTable({ gapBoxes, nowMs, timeZone }: TableProps & { gapBoxes: readonly GapBox[] }) {
  const at = (ms: number) => formatTime(ms, { timeZone, date: "auto", relativeToMs: nowMs });
  return (
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
              <td>{at(g.fromMs)}</td>
              <td>{at(g.toMs)}</td>
              <td>{formatDuration(g.toMs - g.fromMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ActionsTable({ unitName, markers, nowMs, timeZone }: TableProps & { unitName?: string; markers: readonly ActionMarker[] }) {
  return (
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
          {markers.map((m, i) => (
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
  );
}
