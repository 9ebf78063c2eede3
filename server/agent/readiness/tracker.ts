/**
 * One unit's readiness, from three inputs: systemd (a run of the unit begins or ends), the
 * engine's journal lines (stages, progress, durations, its ready line, fatal errors) and probes
 * of the engine's own endpoint. The probe decides `serving`; the log explains everything before
 * it. A run we saw start is `loading` from its first second; one the agent found running is
 * `unknown` until a line or a probe says more. Pure: time comes in with every input.
 */
import type { EngineKind, Readiness, ReadinessProbe } from "../../contract/readiness";
import { unknownReadiness } from "../../contract/readiness";
import type { JournalEntry } from "../../contract/types";
import { recognise, type Recognised } from "./patterns/index";
import { diedWords, systemdExitOf } from "./exitLine";

/** Failed probes in a row before a serving engine counts as not serving (one slow answer is noise). */
export const NOT_SERVING_AFTER_FAILURES = 2;
/** Records after "Traceback (most recent call last):" in which the exception line is expected. */
const TRACEBACK_RECORDS = 80;
const MAX_TIMINGS = 12;
const MAX_LINE = 300;

export interface ProbeOutcome {
  probe: ReadinessProbe;
  /** the engine answered that it is still loading (llama.cpp 503 "Loading model", SGLang 503) */
  loading?: boolean;
  models?: string[];
  /** MiB per loaded model (Ollama /api/ps) */
  vramMiB?: Record<string, number>;
}

interface Failure {
  reason: string;
  sticky: boolean;
  generic: boolean;
}

const CONTEXT: Record<string, string> = {
  "loading weights": "while loading weights",
  "loading model": "while loading the model",
  "allocating KV cache": "while allocating the KV cache",
  "capturing CUDA graphs": "while capturing CUDA graphs",
  "compiling (torch.compile)": "during torch.compile",
  "warming up": "while warming up",
};

export class ReadinessTracker {
  private r: Readiness;
  private running = false;
  private runStartUsec = 0;
  private runEndUsec = 0;
  private endedAs = "inactive";
  private failure: Failure | null = null;
  private failedProbes = 0;
  private tracebackLeft = 0;
  private probeProblem: string | null = null;
  /** the stage the last run ended in (a failure read after the end happened in it) */
  private stageAtEnd: string | null = null;
  /** what a later generic failure (or a silent exit) was about: Ray waiting for GPUs (patterns/ray.ts) */
  private cause: string | null = null;
  /** the run ended failed while loading with no error line: systemd's exit line refines the reason */
  private diedSilently = false;
  /** systemd's words for how the main process ended, when its line came before the end */
  private exitWords: string | null = null;
  /** this run has served (a probe passed, or with probes off the ready line) */
  private served = false;
  /** failed probes in a row in this run, and when the first of them was answered */
  private failing: { count: number; sinceMs: number } | null = null;

  constructor(
    private engine: EngineKind | null,
    /** false: serving is decided by the engine's ready line (probes off or impossible) */
    private probes: boolean,
    nowMs: number,
  ) {
    this.r = unknownReadiness(nowMs, engine);
  }

  get(): Readiness {
    const r = this.r;
    return { ...r, progress: r.progress ? { ...r.progress } : null, models: [...r.models], timings: [...(r.timings ?? [])] };
  }

  isRunning(): boolean {
    return this.running;
  }

  /** Whether this run has served at some point (self-heal acts only on a unit that was serving). */
  servedInRun(): boolean {
    return this.running && this.served;
  }

  /** Failed probes in a row in this run (since the last that passed), or null. */
  probeFailures(): { count: number; sinceMs: number } | null {
    return this.running && this.failing ? { ...this.failing } : null;
  }

  /** The engine (re)detected; `probeProblem` says why it cannot be probed, when it cannot. */
  configure(engine: EngineKind | null, probes: boolean, probeProblem: string | null): void {
    this.engine = engine;
    this.probes = probes;
    this.probeProblem = probeProblem;
    this.r.engine = engine;
    if (this.running && this.r.state === "unknown" && engine && this.r.reason === null) this.r.reason = probes ? null : probeProblem;
  }

  /** A run of the unit began at `atMs`; `fresh`: the agent saw it begin (else it found it running). */
  begin(atMs: number, fresh: boolean): void {
    this.running = true;
    this.runStartUsec = atMs * 1000;
    this.stageAtEnd = null;
    this.failure = null;
    this.cause = null;
    this.diedSilently = false;
    this.exitWords = null;
    this.failedProbes = 0;
    this.served = false;
    this.failing = null;
    this.tracebackLeft = 0;
    const base = unknownReadiness(atMs, this.engine);
    if (!this.engine) this.r = base;
    else if (fresh) this.r = { ...base, state: "loading", stage: "starting", stageSinceMs: atMs, timings: [] };
    else this.r = { ...base, reason: this.probes ? null : this.probeProblem, timings: [] };
  }

  /**
   * The run ended; the unit is now `activeState`. A failure explains the unit (failed, waiting to
   * restart) until it is inactive; an inactive unit is `unknown`.
   */
  end(atMs: number, activeState: string): void {
    const diedLoading = this.running && this.r.state === "loading" && (activeState === "failed" || activeState === "activating");
    if (this.running) {
      this.runEndUsec = atMs * 1000;
      this.stageAtEnd = this.r.stage;
    }
    this.running = false;
    this.endedAs = activeState;
    if (diedLoading && !this.failure) {
      // died while loading, no error line (yet): failed in its stage, with the exit when known
      this.diedSilently = true;
      this.r = { ...this.r, state: "failed", reason: diedWords(this.stageAtEnd, this.exitWords, this.cause), sinceMs: atMs };
      return;
    }
    if (activeState !== "inactive" && this.r.state === "failed") return;
    if (this.r.state !== "unknown" || this.r.probe !== null || this.r.models.length > 0) this.r = unknownReadiness(atMs, this.engine);
  }

  /** A journal entry of the unit. Returns true when the engine said it is ready (probe now). */
  line(entry: JournalEntry): boolean {
    if (!this.engine) return false;
    if (entry.pid === 1) {
      this.systemdLine(entry);
      return false;
    }
    const inRun = entry.atUsec >= this.runStartUsec && (this.running || entry.atUsec <= this.runEndUsec);
    if (!inRun) return false;
    let ready = false;
    for (const item of recognise(this.engine, entry.message)) {
      if (this.running) ready = this.apply(item, entry.atUsec / 1000) || ready;
      // the error that ended the run, logged before it ended but read after (journald is slower than D-Bus)
      else if (this.endedAs !== "inactive") this.applyFailure(item, entry.atUsec / 1000);
    }
    return ready;
  }

  probe(outcome: ProbeOutcome, nowMs: number): void {
    if (!this.running || !this.engine) return;
    const r = this.r;
    r.probe = { ...outcome.probe };
    if (outcome.models) r.models = [...outcome.models];
    if (outcome.vramMiB) r.vramMiB = { ...outcome.vramMiB };
    if (outcome.probe.ok) {
      this.failedProbes = 0;
      this.failing = null;
      if (this.failure?.sticky) return;
      this.failure = null;
      if (r.state !== "serving") this.r = { ...r, state: "serving", stage: null, progress: null, reason: null, sinceMs: nowMs, stageSinceMs: null };
      this.served = true;
      return;
    }
    this.failing = { count: (this.failing?.count ?? 0) + 1, sinceMs: this.failing?.sinceMs ?? outcome.probe.atMs };
    const why = this.failure?.reason ?? probeWords(outcome.probe);
    switch (r.state) {
      case "serving":
        if (++this.failedProbes >= NOT_SERVING_AFTER_FAILURES) this.r = { ...r, state: "not-serving", reason: why, sinceMs: nowMs };
        return;
      case "unknown":
        this.r = { ...r, state: "not-serving", reason: why, sinceMs: nowMs };
        return;
      case "not-serving":
        r.reason = why;
        return;
      case "loading":
        if (outcome.loading && r.stage === "starting") Object.assign(r, { stage: "loading model", stageSinceMs: nowMs });
        return;
      case "failed":
        return;
    }
  }

  /** systemd's line on how the main process ended (PID 1): the exit code or signal of a silent death. */
  private systemdLine(entry: JournalEntry): void {
    const exit = systemdExitOf(entry.message);
    // journald may stamp it a little after the state change D-Bus reported
    if (!exit || entry.atUsec < this.runStartUsec || (!this.running && entry.atUsec > this.runEndUsec + 10_000_000)) return;
    this.exitWords = exit;
    if (this.diedSilently && this.r.state === "failed") this.r = { ...this.r, reason: diedWords(this.stageAtEnd, exit, this.cause) };
  }

  private apply(item: Recognised, atMs: number): boolean {
    const m = item.meaning;
    if (m.cause) this.cause = m.cause;
    if (m.warning) this.r.warning = m.warning;
    if (m.traceback) this.tracebackLeft = TRACEBACK_RECORDS;
    else if (this.tracebackLeft > 0) this.tracebackLeft--;
    if (m.failure) {
      this.applyFailure(item, atMs);
      return false;
    }
    const lead = item.record.rank === null || item.record.rank === 0; // TP ranks run in step: follow rank 0
    if (m.timing && lead) this.r.timings = [...(this.r.timings ?? []), m.timing].slice(-MAX_TIMINGS);
    const r = this.r;
    if (m.stage && lead && r.state !== "serving" && r.state !== "failed") {
      const sameStage = r.stage === m.stage;
      // unknown → loading keeps the run's start; not-serving → loading starts anew
      if (r.state === "not-serving") r.sinceMs = atMs;
      if (r.state !== "loading") Object.assign(r, { state: "loading", reason: null });
      if (!sameStage) r.stageSinceMs = atMs;
      r.progress = m.progress ?? (sameStage ? r.progress : null);
      r.stage = m.stage;
      r.line = lineOf(item, atMs);
    }
    if (m.ready) {
      this.r.line = lineOf(item, atMs);
      if (!this.probes && this.r.state !== "failed") {
        this.r = { ...this.r, state: "serving", stage: null, progress: null, reason: null, sinceMs: atMs, stageSinceMs: null };
        this.served = true;
      }
      return true;
    }
    return false;
  }

  private applyFailure(item: Recognised, atMs: number): void {
    const m = item.meaning;
    if (!m.failure) return;
    // an exception line only counts as the end of a traceback
    if (item.id === "exception" && this.tracebackLeft <= 0) return;
    if (item.id === "exception") this.tracebackLeft = 0;
    // "Engine core initialization failed. See root cause above.": the cause is what came before
    if (m.wrapper && this.failure) return;
    let specific = !m.generic;
    let reason = m.failure;
    let quote = m.quote ?? null;
    // a generic end (the shutdown's CancelledError) of a run that waited for something named: that is the failure
    if (!specific && this.cause && !(this.failure && !this.failure.generic)) {
      reason = this.cause;
      quote = null;
      specific = true;
    }
    if (this.failure && !this.failure.generic && !specific) return; // "Engine core initialization failed" after the OOM that caused it
    this.diedSilently = false;
    const stage = this.running ? this.r.stage : this.stageAtEnd;
    if (m.context) {
      const during = stage ? CONTEXT[stage] : undefined;
      if (during) reason += ` ${during}`;
      if (item.gpu !== null && !/\b(GPU|device) \d/.test(reason)) reason += ` on GPU ${item.gpu}`;
    }
    this.failure = { reason, sticky: m.sticky === true, generic: !specific };
    if (this.r.state === "serving" && !m.sticky) return; // judged by the next probes
    const sinceMs = this.r.state === "failed" ? this.r.sinceMs : atMs;
    this.r = { ...this.r, state: "failed", stage, reason, reasonQuote: quote, sinceMs, line: lineOf(item, atMs) };
  }
}

function lineOf(item: Recognised, atMs: number): { atMs: number; text: string } {
  const text = item.record.text;
  return { atMs, text: text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text };
}

/** "GET http://127.0.0.1:8000/health: connection refused" */
export function probeWords(p: ReadinessProbe): string {
  const path = (() => {
    try {
      return new URL(p.url).pathname;
    } catch {
      return p.url;
    }
  })();
  if (p.status !== null) return `${path} answered ${p.status}${p.detail ? ` (${p.detail})` : ""}`;
  return `${path}: ${p.detail ?? "no answer"}`;
}
