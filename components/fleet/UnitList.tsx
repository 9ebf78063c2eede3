"use client";
/** A list of units, failed and stuck first (./unitOrder.ts); on the fleet overview with a host column. */
import { unitGpuUse } from "@/components/unitGpu";
import type { HostState } from "@/server/contract/fleet";
import type { GpuSample, UnitSummary } from "@/server/contract/types";
import { UnitRow } from "./UnitRow";

export interface ListedUnit {
  host: string;
  hostState: HostState;
  unit: UnitSummary;
}

export function UnitList({
  units,
  showHost,
  gpu,
  nowMs,
  label,
}: {
  units: readonly ListedUnit[];
  showHost: boolean;
  gpu?: GpuSample | null;
  nowMs: number;
  label?: string;
}) {
  return (
    <ul
      aria-label={label}
      className="divide-y divide-zinc-200 overflow-hidden rounded-lg border border-zinc-200 dark:divide-zinc-800 dark:border-zinc-800"
      data-testid="unit-list"
    >
      {units.map((l) => (
        <UnitRow
          key={`${l.host}\n${l.unit.name}`}
          host={l.host}
          hostState={l.hostState}
          unit={l.unit}
          showHost={showHost}
          gpu={gpu === undefined ? null : unitGpuUse(gpu, l.unit.name)}
          nowMs={nowMs}
        />
      ))}
    </ul>
  );
}
