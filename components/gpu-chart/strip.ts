/**
 * The overview's GPU strip, as data: one bar per GPU split into the units holding it, memory
 * held by exited processes, and the rest (processes outside units and memory no process
 * accounts for). Pure, so the arithmetic is tested without a browser.
 */
import { formatMiB } from "@/server/contract/format";
import type { GpuAttributed } from "@/server/contract/types";

export type StripPartKind = "unit" | "exited" | "outside";

export interface StripPart {
  kind: StripPartKind;
  /** unit name for kind=unit; null otherwise */
  unit: string | null;
  miB: number;
  /** share of the bar (0..1); 0 when the total is unknown */
  fraction: number;
  /** what holds it, for labels: PIDs with process names / last units; `unknown`: nvidia-smi gave no number ([N/A]) */
  holders: { pid: number; processName: string; unit: string | null; miB: number; unknown?: boolean }[];
  /** some holder's memory was not reported: `miB` is a lower bound, never show it as the whole */
  unknown: boolean;
  /** memory.used minus the listed processes (only on the outside part) */
  unattributedMiB: number;
}

export interface GpuStripModel {
  uuid: string;
  index: number | null;
  name: string;
  totalMiB: number | null;
  /** nvidia-smi's memory.used, or null when not reported */
  usedMiB: number | null;
  /** sum over listed processes (what we can attribute) */
  attributedMiB: number;
  parts: StripPart[];
  freeMiB: number | null;
  /** holders add up to more than the total (counters raced); fractions are scaled to fit */
  overCommitted: boolean;
  /** memory.total and memory.used both missing (GB10 unified memory) */
  notReported: boolean;
}

export function stripModel(g: GpuAttributed): GpuStripModel {
  const byUnit = new Map<string, StripPart>();
  const exited: StripPart = { kind: "exited", unit: null, miB: 0, fraction: 0, holders: [], unattributedMiB: 0, unknown: false };
  const outside: StripPart = { kind: "outside", unit: null, miB: 0, fraction: 0, holders: [], unattributedMiB: 0, unknown: false };
  let attributed = 0;
  for (const h of g.holders) {
    attributed += h.usedMiB;
    const entry = { pid: h.pid, processName: h.processName, unit: h.unit, miB: h.usedMiB, ...(h.usedMiBUnknown ? { unknown: true } : {}) };
    let part: StripPart;
    if (h.kind === "exited") part = exited;
    else if (h.kind === "unit" && h.unit) {
      part = byUnit.get(h.unit) ?? { kind: "unit", unit: h.unit, miB: 0, fraction: 0, holders: [], unattributedMiB: 0, unknown: false };
      byUnit.set(h.unit, part);
    } else part = outside;
    part.miB += h.usedMiB;
    if (h.usedMiBUnknown) part.unknown = true;
    part.holders.push(entry);
  }
  if (g.memoryUsedMiB != null && g.unattributedMiB > 0) {
    outside.unattributedMiB = g.unattributedMiB;
    outside.miB += g.unattributedMiB;
  }
  const units = [...byUnit.values()].sort((a, b) => b.miB - a.miB || a.unit!.localeCompare(b.unit!));
  const shown = (p: StripPart) => p.miB > 0 || p.unknown;
  const parts = [...units, ...(shown(exited) ? [exited] : []), ...(shown(outside) ? [outside] : [])];
  const sum = parts.reduce((a, p) => a + p.miB, 0);
  const total = g.memoryTotalMiB;
  const overCommitted = total != null && sum > total;
  if (total != null && total > 0) {
    const denom = overCommitted ? sum : total;
    for (const p of parts) p.fraction = p.miB / denom;
  }
  const used = g.memoryUsedMiB;
  return {
    uuid: g.uuid,
    index: g.index,
    name: g.name,
    totalMiB: total,
    usedMiB: used,
    attributedMiB: attributed,
    parts,
    freeMiB: total != null ? Math.max(0, total - Math.max(used ?? sum, sum)) : null,
    overCommitted,
    notReported: total == null && used == null,
  };
}

/** A part's or holder's memory in words: "75.2 GiB", "not reported", "1.0 GiB + not reported" ([N/A] is never 0). */
export function miBText(p: { miB: number; unknown?: boolean }): string {
  if (!p.unknown) return formatMiB(p.miB);
  return p.miB > 0 ? `${formatMiB(p.miB)} + not reported` : "not reported";
}

/**
 * Hues for unit colours: well apart, and away from red (failed) and magenta (memory held by
 * exited processes) so a unit never looks like either.
 */
export const UNIT_HUES: readonly number[] = [205, 150, 40, 255, 185, 95, 230, 125, 60, 170, 270, 25];

/** FNV-1a: stable across sessions and browsers, so a unit keeps its colour everywhere. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function unitHue(unit: string): number {
  return UNIT_HUES[hashString(unit) % UNIT_HUES.length]!;
}

/** Background colour for a unit; saturation and lightness come from the theme (palette.css). */
export function unitColor(unit: string): string {
  return `hsl(${unitHue(unit)} var(--gd-unit-s, 62%) var(--gd-unit-l, 52%))`;
}

/** Text colour on unitColor(unit): dark on the bright yellow-green-cyan hues, white elsewhere. */
export function unitTextColor(unit: string): string {
  const h = unitHue(unit);
  return h >= 35 && h <= 195 ? "#0b0b0b" : "#ffffff";
}
