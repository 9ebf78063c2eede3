"use client";
/**
 * A unit list that stays light when long (a filter over 50 hosts matches 1,000 units): past
 * VIRTUALIZE_AFTER rows only those near the window's view are in the page (@tanstack/react-virtual,
 * window scrolling, rows measured as drawn). Shorter lists are the plain UnitList.
 *
 * Keyboard: Tab walks the rows that are drawn (a few screens' worth); the arrow keys, Home and
 * End move between all of them, scrolling the next one in first, so no row is out of reach. Each
 * row says where it is in the whole list (aria-posinset / aria-setsize).
 */
import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import { UnitList, type ListedUnit } from "./UnitList";
import { UnitRow } from "./UnitRow";

export const VIRTUALIZE_AFTER = 100;
const ESTIMATED_ROW_PX = 64;

/** The row to go to for a key, or null when the key moves nothing. */
export function nextRowIndex(key: string, current: number, count: number): number | null {
  if (count === 0) return null;
  if (key === "ArrowDown") return Math.min(count - 1, current + 1);
  if (key === "ArrowUp") return Math.max(0, current - 1);
  if (key === "Home") return 0;
  if (key === "End") return count - 1;
  return null;
}

export function VirtualUnitList({ units, showHost, nowMs, label }: { units: readonly ListedUnit[]; showHost: boolean; nowMs: number; label?: string }) {
  if (units.length <= VIRTUALIZE_AFTER) return <UnitList units={units} showHost={showHost} nowMs={nowMs} label={label} />;
  return <LongUnitList units={units} showHost={showHost} nowMs={nowMs} label={label} />;
}

function LongUnitList({ units, showHost, nowMs, label }: { units: readonly ListedUnit[]; showHost: boolean; nowMs: number; label?: string }) {
  const listRef = useRef<HTMLUListElement>(null);
  const [scrollMargin, setScrollMargin] = useState(0);
  useLayoutEffect(() => {
    const measure = () => {
      const el = listRef.current;
      if (el) setScrollMargin(el.getBoundingClientRect().top + window.scrollY);
    };
    measure();
    window.addEventListener("resize", measure);
    return () => window.removeEventListener("resize", measure);
  }, []);
  const virtualizer = useWindowVirtualizer({
    count: units.length,
    estimateSize: () => ESTIMATED_ROW_PX,
    overscan: 12,
    scrollMargin,
    getItemKey: (i) => `${units[i]!.host}\n${units[i]!.unit.name}`,
  });
  const items = virtualizer.getVirtualItems();
  const before = items.length > 0 ? items[0]!.start - scrollMargin : 0;
  const after = items.length > 0 ? virtualizer.getTotalSize() - (items[items.length - 1]!.end - scrollMargin) : 0;

  const focusRow = (index: number, tries = 10) => {
    const link = listRef.current?.querySelector<HTMLElement>(`li[data-index="${index}"] a`);
    if (link) link.focus();
    else if (tries > 0) requestAnimationFrame(() => focusRow(index, tries - 1));
  };
  const onKeyDown = (e: KeyboardEvent<HTMLUListElement>) => {
    const row = (e.target as HTMLElement).closest<HTMLElement>("li[data-index]");
    if (!row) return;
    const next = nextRowIndex(e.key, Number(row.dataset.index), units.length);
    if (next === null) return;
    e.preventDefault();
    virtualizer.scrollToIndex(next, { align: "auto" });
    focusRow(next);
  };

  return (
    <ul
      ref={listRef}
      aria-label={label}
      onKeyDown={onKeyDown}
      style={{ paddingTop: before, paddingBottom: after }}
      className="divide-y divide-zinc-200 overflow-hidden rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800"
      data-testid="unit-list"
      data-virtualized="true"
      data-rows={units.length}
    >
      {items.map((item) => {
        const l = units[item.index]!;
        return (
          <UnitRow
            key={item.key}
            index={item.index}
            setSize={units.length}
            measureRef={virtualizer.measureElement}
            host={l.host}
            hostState={l.hostState}
            unit={l.unit}
            showHost={showHost}
            gpu={null}
            nowMs={nowMs}
          />
        );
      })}
    </ul>
  );
}
