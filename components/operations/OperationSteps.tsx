/** The steps of a GPU-aware restart as an ordered list: each with what it is (done, now, skipped …) in words and its duration. */
import { formatDuration } from "@/server/contract/format";
import type { StepStatus, StepView } from "./operationView";

const STATUS_TEXT: Record<StepStatus, string> = {
  done: "done",
  current: "now",
  skipped: "not needed",
  pending: "to come",
  "not-reached": "not reached",
  failed: "ended here",
};
const STATUS_ICON: Record<StepStatus, string> = { done: "✓", current: "◐", skipped: "–", pending: "○", "not-reached": "–", failed: "✕" };

/** dimmed: steps not taken (yet); at most one opacity over a text (0.8 keeps every tone's text at AA, 4.5:1) */
const DIMMED: ReadonlySet<StepStatus> = new Set(["skipped", "not-reached", "pending"]);

export function OperationSteps({ steps }: { steps: readonly StepView[] }) {
  return (
    <ol className="flex flex-wrap items-center gap-x-1 gap-y-1 text-xs" aria-label="Steps" data-testid="operation-steps">
      {steps.map((s, i) => (
        <li key={s.step} data-step={s.step} data-status={s.status} className="flex items-center gap-1">
          {i > 0 && (
            <span aria-hidden="true" className="opacity-60">
              →
            </span>
          )}
          <span
            className={`flex items-center gap-1 rounded px-1.5 py-0.5 ring-1 ring-inset ring-zinc-500/40 ${s.status === "current" ? "font-semibold" : ""} ${
              DIMMED.has(s.status) ? "opacity-80" : ""
            }`}
          >
            <span aria-hidden="true" className={s.status === "current" ? "animate-pulse" : ""}>
              {STATUS_ICON[s.status]}
            </span>
            <span>{s.label}</span>
            <span className={DIMMED.has(s.status) ? "" : "opacity-80"}>
              ({STATUS_TEXT[s.status]}
              {s.durationMs != null && `, ${formatDuration(s.durationMs)}`})
            </span>
          </span>
        </li>
      ))}
    </ol>
  );
}
