/**
 * The tooltip box below the lanes, pointing at its item. Pinned ones get a × button; Esc inside
 * closes it and hands focus back to the plot so the keyboard user is not left nowhere.
 */
import type { ReactNode } from "react";
import { PLAIN_FRAME, type TimelineFrame } from "./frame";

export function TimelineTooltip({
  x,
  width,
  pinned,
  onClose,
  onEscape,
  frame = PLAIN_FRAME,
  children,
}: {
  /** the item's x in the component's px */
  x: number;
  /** the component's width */
  width: number;
  pinned: boolean;
  onClose: () => void;
  /** closed by Esc: also put focus somewhere sensible */
  onEscape: () => void;
  frame?: TimelineFrame;
  children: ReactNode;
}) {
  return (
    <div
      role="tooltip"
      className="absolute z-20 w-max max-w-[min(24rem,calc(100%-8px))] rounded-md border p-2 text-xs shadow-lg"
      style={{
        top: frame.lanesBottom + 2,
        left: Math.max(4, Math.min(width - 4, x)),
        // Shift left in proportion to x so the box never leaves the component.
        transform: `translateX(-${Math.round((Math.max(0, Math.min(width, x)) / Math.max(1, width)) * 100)}%)`,
        background: "var(--gd-surface)",
        color: "var(--gd-surface-fg)",
        borderColor: "var(--gd-border)",
      }}
      onPointerDown={(e) => e.stopPropagation()}
      onKeyDown={(e) => {
        if (e.key === "Escape") onEscape();
      }}
    >
      {children}
      {pinned && (
        <button
          type="button"
          className="absolute top-1 right-1 rounded px-1 text-[var(--gd-surface-muted)] hover:text-[var(--gd-surface-fg)]"
          aria-label="Close details"
          onClick={onClose}
        >
          ×
        </button>
      )}
    </div>
  );
}
