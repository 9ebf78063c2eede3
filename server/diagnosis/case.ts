/**
 * The shape of one diagnosis case. The registry (./registry.ts) asks the cases in priority
 * order; the first that recognises the unit's situation answers.
 */
import type { Diagnosis, DiagnosisCode } from "../contract/diagnosis";
import type { DiagnosisContext } from "./context";

export interface DiagnosisCase {
  /** Names the case in tests and reviews; not part of the wire contract. */
  id: string;
  /** Every code this case can answer with. */
  codes: readonly DiagnosisCode[];
  /** The diagnosis, or null when the situation is not this case's (the next case is asked). */
  diagnose(ctx: DiagnosisContext): Diagnosis | null;
}

/** The case asked last, when no other recognised the state: it always answers. */
export interface FallbackCase extends DiagnosisCase {
  diagnose(ctx: DiagnosisContext): Diagnosis;
}
