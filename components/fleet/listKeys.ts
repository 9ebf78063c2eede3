/** Keyboard moves in a virtualized unit list (./LongUnitList.tsx). */
/** The row to go to for a key, or null when the key moves nothing. */
export function nextRowIndex(key: string, current: number, count: number): number | null {
  if (count === 0) return null;
  if (key === "ArrowDown") return Math.min(count - 1, current + 1);
  if (key === "ArrowUp") return Math.max(0, current - 1);
  if (key === "Home") return 0;
  if (key === "End") return count - 1;
  return null;
}
