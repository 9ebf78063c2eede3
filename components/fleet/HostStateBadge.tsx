/**
 * A host's connection as the panel sees it: connected, connecting or down. The icon and the word
 * carry the meaning; colour only adds to it.
 */
import type { HostState } from "@/server/contract/fleet";

const LOOK: Record<HostState, { icon: string; className: string }> = {
  connected: { icon: "●", className: "bg-emerald-100 text-emerald-900 ring-emerald-600/40 dark:bg-emerald-950 dark:text-emerald-200" },
  connecting: { icon: "◐", className: "bg-amber-100 text-amber-900 ring-amber-600/50 dark:bg-amber-950 dark:text-amber-200" },
  down: { icon: "✕", className: "bg-red-100 text-red-900 ring-red-600/50 dark:bg-red-950 dark:text-red-200" },
};

export function HostStateBadge({ state }: { state: HostState }) {
  const look = LOOK[state];
  return (
    <span
      data-testid="host-state"
      data-state={state}
      className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-md px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${look.className}`}
    >
      {/* drawn by CSS so the badge's text is exactly the state */}
      <span aria-hidden="true" data-icon={look.icon} className="before:content-[attr(data-icon)]" />
      {state}
    </span>
  );
}
