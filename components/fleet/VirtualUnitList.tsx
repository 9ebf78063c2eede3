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
import { lazy, Suspense } from "react";
import { UnitList, type ListedUnit } from "./UnitList";

export const VIRTUALIZE_AFTER = 100;

// the virtualizer's code comes only with a list that long; its first rows show meanwhile
const LongUnitList = lazy(() => import("./LongUnitList").then((m) => ({ default: m.LongUnitList })));

export function VirtualUnitList({ units, showHost, nowMs, label }: { units: readonly ListedUnit[]; showHost: boolean; nowMs: number; label?: string }) {
  if (units.length <= VIRTUALIZE_AFTER) return <UnitList units={units} showHost={showHost} nowMs={nowMs} label={label} />;
  return (
    <Suspense fallback={<UnitList units={units.slice(0, VIRTUALIZE_AFTER)} showHost={showHost} nowMs={nowMs} label={label} />}>
      <LongUnitList units={units} showHost={showHost} nowMs={nowMs} label={label} />
    </Suspense>
  );
}
