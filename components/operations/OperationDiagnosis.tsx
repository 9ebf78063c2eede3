/**
 * The diagnosis card while a GPU-aware operation runs for the unit (./operationDiagnosis.ts): it
 * speaks of the operation and offers no action (the operation's own box above has Cancel).
 */
import type { Operation } from "@/server/contract/operations";
import type { Readiness } from "@/server/contract/readiness";
import { operationDiagnosis } from "./operationDiagnosis";

export function OperationDiagnosis({ operation, readiness, nowMs }: { operation: Operation; readiness: Readiness | undefined; nowMs: number }) {
  const text = operationDiagnosis(operation, readiness, nowMs);
  if (!text) return null;
  return (
    <section
      aria-labelledby="diagnosis-heading"
      className="rounded-lg border border-sky-300 bg-sky-50 p-4 text-sky-950 dark:border-sky-800 dark:bg-sky-950/60 dark:text-sky-100"
      data-testid="diagnosis"
      data-code="operation-running"
      data-severity="info"
      data-operation={operation.id}
    >
      <h2 id="diagnosis-heading" className="text-xs font-semibold uppercase tracking-wide opacity-80">
        Operation under way · why is it in this state?
      </h2>
      <p className="mt-1 text-base font-medium leading-snug" data-testid="diagnosis-headline">
        {text.headline}
      </p>
      {text.details.map((d, i) => (
        <p key={i} className="mt-1 text-sm opacity-90">
          {d}
        </p>
      ))}
      <p className="mt-2 text-sm">
        <b>Next step:</b> {text.nextStep}
      </p>
    </section>
  );
}
