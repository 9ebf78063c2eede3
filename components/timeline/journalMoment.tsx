"use client";
/**
 * From the timeline to the logs: the moment a tooltip's item stands for (a transition, an
 * action marker, a readiness stage, an Xid fault) and a link that opens the unit's journal
 * there, ±2 minutes, with the kernel lines of the faulting GPU for a fault.
 */
import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";
import { Suspense } from "react";
import type { GpuFault } from "@/server/contract/faults";
import { momentParams } from "@/components/journal/journalView";
import type { LaneBox } from "./layout";
import type { ActionMarker } from "./markers";
import type { ReadinessBox } from "./readinessLayout";
import type { Tip } from "./useTimelineTooltip";

export interface JournalMoment {
  atMs: number;
  kernelPci?: string[];
}

const known = (ms: number | null | undefined) => (ms != null && Number.isFinite(ms) && ms > 0 ? ms : null);

/** The moment of the tip's item; null for items without one (spans without an agent, operations). */
export function tipMoment(
  tip: Tip,
  drawn: { boxes: readonly LaneBox[]; markers: readonly ActionMarker[]; readinessBoxes: readonly ReadinessBox[]; faults: readonly GpuFault[] },
): JournalMoment | null {
  if (tip.kind === "segment") {
    const b = drawn.boxes[tip.index];
    if (!b) return null;
    const at = b.kind === "segment" ? known(b.segment.realStartMs ?? b.segment.startMs) : known(b.startMs);
    return at ? { atMs: at } : null;
  }
  if (tip.kind === "marker") {
    const m = drawn.markers[tip.index];
    return m ? { atMs: m.atMs } : null;
  }
  if (tip.kind === "readiness") {
    const b = drawn.readinessBoxes[tip.index];
    if (!b) return null;
    const at = b.kind === "segment" ? known(b.segment.realStartMs ?? b.segment.startMs) : known(b.startMs);
    return at ? { atMs: at } : null;
  }
  if (tip.kind === "fault") {
    const f = drawn.faults[tip.index];
    return f ? { atMs: f.atMs, kernelPci: f.pci ? [f.pci] : undefined } : null;
  }
  return null;
}

export function JournalMomentLink({ moment }: { moment: JournalMoment }) {
  return (
    <Suspense fallback={null}>
      <MomentLink moment={moment} />
    </Suspense>
  );
}

function MomentLink({ moment }: { moment: JournalMoment }) {
  const pathname = usePathname();
  const params = useSearchParams();
  const next = momentParams(new URLSearchParams(params.toString()), moment.atMs, moment.kernelPci);
  return (
    <Link
      href={`${pathname}?${next.toString()}#journal`}
      scroll={false}
      className="mt-1 inline-block text-xs underline"
      data-testid="timeline-journal-link"
      onClick={() => setTimeout(() => document.getElementById("journal")?.scrollIntoView({ block: "start" }), 50)}
    >
      Journal at this moment (±2 min{moment.kernelPci ? ", with the GPU's kernel lines" : ""})
    </Link>
  );
}
