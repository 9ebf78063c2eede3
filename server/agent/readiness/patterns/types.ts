/**
 * The shape of a log-line pattern: a regular expression over one log record and what a match
 * means for readiness. One table per engine (./vllm.ts …) plus the lines every engine shares
 * (./common.ts); each pattern has a test on real-format lines beside its table.
 */
import type { EngineTiming } from "../../../contract/readiness";

export interface LineMeaning {
  /** the load stage this line puts the engine in */
  stage?: string;
  progress?: { done: number; total: number };
  /** a duration the engine logged for a stage it finished */
  timing?: EngineTiming;
  /** the engine says it serves ("Application startup complete.", "The server is fired up …") */
  ready?: true;
  /** a fatal error, in words; context: add the stage and GPU ("… while loading weights on GPU 3") */
  failure?: string;
  /** the part of `failure` that is the log's own text (an exception's message), not gpudeck's words */
  quote?: string;
  context?: true;
  /**
   * sticky: a passing probe does not clear it (Ollama on the CPU answers, but not from a GPU);
   * generic: a later specific failure of the same run replaces it, it never replaces one.
   */
  sticky?: true;
  generic?: true;
  /** a Python traceback begins: its last line (the exception) is the failure */
  traceback?: true;
  /**
   * wrapper: a generic line that only reports a failure explained above it ("Engine core
   * initialization failed. See root cause above."): it never replaces a failure already read.
   */
  wrapper?: true;
  /**
   * cause: not a failure yet, but what a later generic failure (or an exit with no error line)
   * was about: Ray waiting for GPUs it cannot place; the shutdown's CancelledError is not the cause.
   */
  cause?: string;
  /** a warning shown beside the state, never a failure while the engine answers (Ollama on the CPU) */
  warning?: string;
}

export interface LinePattern {
  /** names the pattern in tests */
  id: string;
  re: RegExp;
  meaning: (m: RegExpExecArray) => LineMeaning;
}

export const num = (text: string | undefined): number => Number((text ?? "").replace(/,/g, ""));

/** A tqdm bar's `done/total`, when both are numbers and done ≤ total. */
export function progressOf(done: string | undefined, total: string | undefined): { done: number; total: number } | undefined {
  const d = num(done);
  const t = num(total);
  return Number.isInteger(d) && Number.isInteger(t) && t > 0 && d >= 0 && d <= t ? { done: d, total: t } : undefined;
}
