/**
 * "Why won't it start?" — one diagnosis of a systemd unit from facts the agent already holds.
 *
 * Public API (stable; the agent recomputes it live on every fact change, the panel renders it):
 *
 *   diagnose(facts: DiagnosisFacts): Diagnosis
 *     Pure and synchronous: no I/O, no clock (everything is relative to facts.nowMs), never throws
 *     on partial facts (missing GPU data, null telemetry cells, empty history or journal).
 *
 *   gpusUsedByUnit(unitName: string, samples: (GpuSample | null)[]): string[]
 *     GPU uuids on which the unit's processes (live or exited) held memory in those samples; the
 *     agent can pass the result as facts.unitGpus from a longer history than the last minute.
 *
 *   DIAGNOSIS_CODES / DiagnosisCode: the stable id of every case (see ../contract/diagnosis.ts).
 *
 * Diagnosis = { severity: ok|info|warning|critical, code, headline (one sentence with the key
 * numbers), evidence: {label, value, source}[], nextStep?: {text, action?: {kind, unit}},
 * etaMs?: ms from facts.nowMs until the awaited event (memory free, SIGKILL, timeout, restart) }.
 *
 * Each case (issue 6) is a module in ./cases/; ./registry.ts asks them in priority order, over
 * a context (./context.ts) built once per call. Cases: waiting in ExecStartPre for GPU memory
 * held by an exited process / another unit / a process outside any unit / nobody listed;
 * ExecStartPre or ExecStart exited non-zero; Result=timeout and its phase; crash loop and start
 * limit; main process exited soon after becoming active; LoadState not-found / masked /
 * bad-setting / error and failed dependencies (named, from facts.dependencies, when the agent
 * read them); stop stuck in stop-sigterm; healthy; plus stopped, queued, plain start-pre and
 * unknown states.
 */
import type { Diagnosis } from "../contract/diagnosis";
import { unitNotKnown } from "./cases/loadState";
import { buildContext } from "./context";
import { firstAnswer } from "./registry";
import type { DiagnosisFacts } from "./types";

export { gpusUsedByUnit } from "./gpu";
export { DIAGNOSIS_CODES } from "../contract/diagnosis";
export type { DependencyState, DiagnosisFacts } from "./types";
export type { Diagnosis, DiagnosisCode, DiagnosisSeverity, Evidence, NextStep } from "../contract/diagnosis";
// Thresholds and helpers that used to live here, for callers that imported them from this file.
export { SOON_AFTER_ACTIVE_MS } from "./cases/failed";
export { STOP_STUCK_AFTER_MS } from "./cases/stopping";
export { FLAPPING_WINDOW_MS } from "./cases/active";
export { GPU_SAMPLE_STALE_MS } from "./gpuEvidence";
export { execArgv } from "./processes";

export function diagnose(facts: DiagnosisFacts): Diagnosis {
  if (facts.unit === null) return unitNotKnown(facts.requestedName, facts.journal);
  return markQuotes(firstAnswer(buildContext(facts, facts.unit)).diagnosis, facts.readiness?.reasonQuote ?? null);
}

/** Name the log text a diagnosis quotes (the engine's exception message), so the panel can hide it from who may not read journals. */
function markQuotes(d: Diagnosis, quote: string | null): Diagnosis {
  if (!quote) return d;
  const texts = [d.headline, d.nextStep?.text ?? "", ...d.evidence.map((e) => e.value)];
  return texts.some((t) => t.includes(quote)) ? { ...d, journalQuotes: [quote] } : d;
}
