/**
 * One line saying whether the engine serves: "◐ loading weights 37/119 · 2 min 10 s",
 * "● serving /models/kimi-k2.5", "✕ vLLM failed: …". Nothing when readiness is unknown. The
 * words carry the meaning; the icon and colour only add to them.
 */
import type { Readiness } from "@/server/contract/readiness";
import { readinessText, type ReadinessTone } from "./readinessText";

const TONE_CLASS: Record<ReadinessTone, string> = {
  ok: "text-emerald-800 dark:text-emerald-300",
  busy: "text-amber-900 dark:text-amber-200",
  warn: "text-purple-900 dark:text-purple-200",
  bad: "font-semibold text-red-800 dark:text-red-300",
};
const TONE_ICON: Record<ReadinessTone, string> = { ok: "●", busy: "◐", warn: "!", bad: "✕" };

export function ReadinessLine({ readiness, nowMs, className = "" }: { readiness: Readiness | undefined; nowMs: number; className?: string }) {
  const r = readinessText(readiness, nowMs);
  if (!r) return null;
  return (
    <span data-testid="readiness" data-state={r.state} className={`inline-flex min-w-0 items-baseline gap-1 ${TONE_CLASS[r.tone]} ${className}`}>
      <span aria-hidden="true" data-icon={TONE_ICON[r.tone]} className={`before:content-[attr(data-icon)] ${r.tone === "busy" ? "animate-pulse" : ""}`} />
      <span className="min-w-0 break-words tabular-nums">{r.text}</span>
    </span>
  );
}
