"use client";
/**
 * The fleet overview's hosts (./fleetView.ts): those with something to look at open, first, as a
 * card with their units; healthy ones folded to one line each ("gpu-17 · 20 serving"). Every host
 * folds and unfolds with one button (aria-expanded), in place: the row pressed does not move.
 * The units already listed under "Needs attention" are not repeated in their host's card.
 */
import Link from "next/link";
import { useEffect, useRef, type RefObject } from "react";
import type { HostUnit } from "@/server/contract/fleet";
import { plural } from "@/server/contract/format";
import type { HostGroup } from "./fleetView";
import { HostCard } from "./HostCard";
import { HostStateBadge } from "./HostStateBadge";
import { hostHref } from "./links";
import { VirtualUnitList } from "./VirtualUnitList";

const muted = "text-zinc-500 dark:text-zinc-400";
const toggleClass =
  "rounded-md border border-zinc-300 px-1.5 text-xs text-zinc-700 hover:bg-zinc-100 dark:border-zinc-700 dark:text-zinc-300 dark:hover:bg-zinc-800";

export function FleetHosts({
  groups,
  listedAbove,
  isOpen,
  onToggle,
  toggledLast,
  nowMs,
}: {
  groups: readonly HostGroup[];
  /** units shown under "Needs attention" (host \n name) */
  listedAbove: ReadonlySet<string>;
  isOpen: (g: HostGroup) => boolean;
  onToggle: (g: HostGroup) => void;
  /** the host folded or unfolded last: its button (a new one) takes the focus */
  toggledLast: string | null;
  nowMs: number;
}) {
  return (
    <ul className="grid grid-cols-1 gap-2 sm:grid-cols-2 lg:grid-cols-3" data-testid="host-list">
      {groups.map((g) =>
        isOpen(g) ? (
          <OpenHost key={g.name} group={g} listedAbove={listedAbove} onToggle={() => onToggle(g)} focusToggle={toggledLast === g.name} nowMs={nowMs} />
        ) : (
          <FoldedHost key={g.name} group={g} onToggle={() => onToggle(g)} focusToggle={toggledLast === g.name} />
        ),
      )}
    </ul>
  );
}

/** The fold button replaces the unfold one (and back): keep the keyboard's place on it. */
function useFocusOnMount(focus: boolean): RefObject<HTMLButtonElement | null> {
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (focus) ref.current?.focus();
    // on mount only: the button is new
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return ref;
}

const unitsId = (host: string) => `host-units-${host.replace(/[^A-Za-z0-9_-]/g, "_")}`;

function FoldedHost({ group: g, onToggle, focusToggle }: { group: HostGroup; onToggle: () => void; focusToggle: boolean }) {
  const ref = useFocusOnMount(focusToggle);
  return (
    <li
      data-testid="host-card"
      data-host={g.name}
      data-state={g.state}
      data-folded="true"
      className="flex min-w-0 items-center gap-2 rounded-lg border border-zinc-200 px-2 py-1 text-sm dark:border-zinc-800"
    >
      <button
        ref={ref}
        type="button"
        aria-expanded={false}
        onClick={onToggle}
        className="flex min-w-0 flex-1 items-center gap-1.5 rounded text-left hover:underline"
        data-testid="host-fold"
      >
        <span aria-hidden="true" className={muted}>
          ▸
        </span>
        <span className="truncate font-mono" data-testid="host-line">
          {g.line}
        </span>
      </button>
      <HostStateBadge state={g.state} />
    </li>
  );
}

function OpenHost({
  group: g,
  listedAbove,
  onToggle,
  focusToggle,
  nowMs,
}: {
  group: HostGroup;
  listedAbove: ReadonlySet<string>;
  onToggle: () => void;
  focusToggle: boolean;
  nowMs: number;
}) {
  const ref = useFocusOnMount(focusToggle);
  const rest: HostUnit[] = g.units.filter((u) => !listedAbove.has(`${u.host}\n${u.name}`));
  const above = g.units.length - rest.length;
  return (
    <HostCard
      host={g.summary}
      nowMs={nowMs}
      className="col-span-full"
      toggle={
        <button ref={ref} type="button" aria-expanded={true} aria-controls={unitsId(g.name)} onClick={onToggle} className={toggleClass} data-testid="host-fold">
          <span aria-hidden="true">▾</span>
          <span className="sr-only">Fold {g.name}</span>
        </button>
      }
    >
      {g.reasons.length > 0 && (
        <p className="font-medium text-amber-800 dark:text-amber-300" data-testid="host-reasons">
          {g.reasons.join(" · ")}
        </p>
      )}
      <div id={unitsId(g.name)} className="space-y-1 pt-1">
        {above > 0 && (
          <p className={`text-xs ${muted}`}>
            {plural(above, "unit")} of {g.name} listed above, under Needs attention.
          </p>
        )}
        {rest.length > 0 ? (
          <VirtualUnitList
            units={rest.map((u) => ({ host: u.host, hostState: g.state, unit: u }))}
            showHost={false}
            nowMs={nowMs}
            label={`Units of ${g.name}`}
          />
        ) : (
          above === 0 && (
            <p className={`text-xs ${muted}`}>
              No units.{" "}
              <Link href={hostHref(g.name)} className="underline">
                Its page
              </Link>
            </p>
          )
        )}
      </div>
    </HostCard>
  );
}
