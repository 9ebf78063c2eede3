"use client";
/**
 * The virtualized unit list (./VirtualUnitList.tsx says when and how); its own module, so
 * @tanstack/react-virtual is downloaded only by a page that lists that many units.
 */
import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useLayoutEffect, useRef, useState, type KeyboardEvent } from "react";
import type { ListedUnit } from "./UnitList";
import { UnitRow } from "./UnitRow";
import { nextRowIndex } from "./listKeys";

const ESTIMATED_ROW_PX = 64;

export function LongUnitList({ units, showHost, nowMs, label }: { units: readonly ListedUnit[]; showHost: boolean; nowMs: number; label?: string }) {
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
