/**
 * ActiveState and SubState as text and colour, never flattened: `activating (start-pre)` is
 * not "running". The icon and text carry the meaning; colour only adds to it.
 */
export function stateTone(active: string, sub: string): "ok" | "busy" | "bad" | "idle" | "warn" {
  if (active === "failed") return "bad";
  if (active === "active") return sub === "running" || sub === "exited" || sub === "listening" ? "ok" : "warn";
  if (active === "activating" || active === "deactivating" || active === "reloading") return sub === "auto-restart" ? "warn" : "busy";
  return "idle";
}

const TONE_CLASS: Record<ReturnType<typeof stateTone>, string> = {
  ok: "bg-emerald-100 text-emerald-900 ring-emerald-600/40 dark:bg-emerald-950 dark:text-emerald-200",
  busy: "bg-amber-100 text-amber-900 ring-amber-600/50 dark:bg-amber-950 dark:text-amber-200",
  warn: "bg-purple-100 text-purple-900 ring-purple-600/40 dark:bg-purple-950 dark:text-purple-200",
  bad: "bg-red-100 text-red-900 ring-red-600/50 dark:bg-red-950 dark:text-red-200",
  idle: "bg-zinc-100 text-zinc-800 ring-zinc-500/40 dark:bg-zinc-800 dark:text-zinc-200",
};
const TONE_ICON: Record<ReturnType<typeof stateTone>, string> = { ok: "●", busy: "◐", warn: "↻", bad: "✕", idle: "○" };

export function stateLabel(active: string, sub: string): string {
  return sub ? `${active} (${sub})` : active;
}

export function StateBadge({ active, sub, size = "md" }: { active: string; sub: string; size?: "md" | "lg" }) {
  const tone = stateTone(active, sub);
  return (
    <span
      data-testid="state-badge"
      data-state={`${active}/${sub}`}
      className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-md px-2 py-0.5 font-mono ring-1 ring-inset ${TONE_CLASS[tone]} ${size === "lg" ? "text-base" : "text-xs"}`}
    >
      {/* the icon is drawn by CSS so the badge's text is exactly the state */}
      <span aria-hidden="true" data-icon={TONE_ICON[tone]} className={`before:content-[attr(data-icon)] ${tone === "busy" ? "animate-pulse" : ""}`} />
      {stateLabel(active, sub)}
    </span>
  );
}
