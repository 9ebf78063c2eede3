"use client";
/**
 * The open tooltip of the timeline: its content for the item (./TipDetails.tsx), the box that
 * points at it and, pinned on the unit page, the link to the journal at that moment. Its own
 * module, loaded when the timeline is first pointed at or focused (./lazyTip.ts): nobody reads a
 * tooltip before that, and the unit page's first download stays under its budget
 * (bench/route-js.ts).
 */
import { JournalMomentLink, tipMoment } from "./journalMoment";
import type { TimelineFrame } from "./frame";
import { TimelineTooltip } from "./TimelineTooltip";
import { tipDetails } from "./TipDetails";
import type { Tip } from "./useTimelineTooltip";

export function TimelineTip({
  tip,
  drawn,
  nowMs,
  timeZone,
  width,
  frame,
  journalLinks,
  onClose,
  onEscape,
}: {
  tip: Tip;
  drawn: Parameters<typeof tipDetails>[1] & Parameters<typeof tipMoment>[1];
  nowMs: number;
  timeZone?: string;
  width: number;
  frame: TimelineFrame;
  journalLinks: boolean;
  onClose: () => void;
  onEscape: () => void;
}) {
  const { x, content } = tipDetails(tip, drawn, nowMs, timeZone);
  const moment = tip.pinned && journalLinks ? tipMoment(tip, drawn) : null;
  return (
    <TimelineTooltip x={x} width={width} pinned={tip.pinned} frame={frame} onClose={onClose} onEscape={onEscape}>
      {content}
      {moment && <JournalMomentLink moment={moment} />}
    </TimelineTooltip>
  );
}
