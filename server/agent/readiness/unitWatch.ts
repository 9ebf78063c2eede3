/**
 * One unit under readiness watch: its tracker (./tracker.ts), its probe schedule
 * (./probeLoop.ts) and its engine metrics, and when to tell the rest of the agent: every change
 * of state, stage, reason, models or probe outcome at once, progress alone at most once a second
 * (a progress bar must not flood the event ring), state and stage changes also as a timeline
 * transition.
 */
import type { EngineHistoryRow, EngineMetrics, Readiness, ReadinessTransition } from "../../contract/readiness";
import type { JournalEntry } from "../../contract/types";
import type { EngineHttp } from "../adapter";
import { readEngineMetrics, type MetricsReading } from "./engineMetrics";
import { DEFAULT_PROBE_TIMING, ProbeLoop, type ProbeTiming } from "./probeLoop";
import { probeEngine, scrapeMetricsText } from "./probes";
import type { ProbePlan } from "./target";
import { ReadinessTracker } from "./tracker";

/** Progress-only updates are sent at most this often. */
export const PROGRESS_EVERY_MS = 1000;
/** Models are asked for with every probe until known, then with every this-many probes. */
const MODELS_EVERY = 6;

export interface UnitWatchDeps {
  http: EngineHttp | null;
  now: () => number;
  timing?: ProbeTiming;
  /** a change to pass on (a `readiness` event) */
  emit(unit: string, readiness: Readiness): void;
  /** a state or stage change, for the timeline */
  record(t: ReadinessTransition): void;
  /** the last transition recorded for the unit (from an earlier run of the agent too) */
  lastRecorded(unit: string): ReadinessTransition | null;
  log(msg: string): void;
  /** each scrape's load and latency, for units.engineHistory */
  engineRow?(unit: string, row: EngineHistoryRow): void;
}

export class UnitWatch {
  readonly tracker: ReadinessTracker;
  plan: ProbePlan = { engine: null, baseUrl: null, probeUrl: null, probes: false, problem: null, metrics: false };
  running = false;
  runStartMs = 0;
  runFresh = false;
  lastActive = "";
  /** newest journal entry applied (older ones, e.g. a backlog overlapping the live feed, are skipped) */
  private lastEntry: { atUsec: number; cursor: string } | null = null;
  private run = 0;
  private probes = 0;
  private metricsReading: MetricsReading | null = null;
  private metricsMissing = false;
  private readonly loop: ProbeLoop;
  private readonly timing: ProbeTiming;
  private sentKey = "";
  private sentAtMs = 0;
  private trailing: ReturnType<typeof setTimeout> | null = null;

  constructor(
    readonly name: string,
    private readonly deps: UnitWatchDeps,
  ) {
    this.timing = deps.timing ?? DEFAULT_PROBE_TIMING;
    this.tracker = new ReadinessTracker(null, false, deps.now());
    this.loop = new ProbeLoop(
      (signal) => this.probeOnce(signal),
      () => this.nextDelay(),
      (err) => deps.log(`readiness: probing ${name} failed: ${err.message}`),
    );
  }

  readiness(): Readiness {
    return this.tracker.get();
  }

  metrics(): EngineMetrics | null {
    return this.metricsReading?.metrics ?? null;
  }

  configure(plan: ProbePlan): void {
    const engineChanged = plan.engine !== this.plan.engine;
    this.plan = plan;
    this.tracker.configure(plan.engine, plan.probes, plan.problem);
    if (engineChanged && this.running) this.tracker.begin(this.runStartMs, this.runFresh);
    if (this.running) this.startProbing();
    this.changed();
  }

  begin(atMs: number, fresh: boolean): void {
    this.running = true;
    this.runStartMs = atMs;
    this.runFresh = fresh;
    this.run++;
    this.probes = 0;
    this.metricsReading = null;
    this.metricsMissing = false;
    this.tracker.begin(atMs, fresh);
    this.startProbing();
    this.changed();
  }

  end(atMs: number, activeState: string): void {
    if (this.running) this.run++;
    this.running = false;
    this.loop.stop();
    this.metricsReading = null;
    this.tracker.end(atMs, activeState);
    this.changed();
  }

  entry(e: JournalEntry): void {
    const last = this.lastEntry;
    if (last && (e.cursor === last.cursor || e.atUsec < last.atUsec)) return;
    this.lastEntry = { atUsec: e.atUsec, cursor: e.cursor };
    if (this.tracker.line(e)) this.loop.soon();
    this.changed();
  }

  close(): void {
    this.loop.stop();
    if (this.trailing) clearTimeout(this.trailing);
    this.trailing = null;
  }

  private startProbing(): void {
    if (this.plan.probes && this.deps.http && this.running) this.loop.start(this.timing.firstMs);
    else this.loop.stop();
  }

  private nextDelay(): number {
    const t = this.timing;
    // a serving engine's failed probe is confirmed (or not) soon, not a whole serving interval later
    if (this.tracker.get().state === "serving") return this.tracker.probeFailures() ? t.fastMs : t.servingMs;
    return this.deps.now() - this.runStartMs < t.fastForMs ? t.fastMs : t.slowMs;
  }

  private async probeOnce(signal: AbortSignal): Promise<void> {
    const http = this.deps.http;
    const plan = this.plan;
    if (!http || !plan.engine || !this.running) return;
    const run = this.run;
    const known = this.tracker.get().models.length > 0;
    const outcome = await probeEngine(http, {
      unit: this.name,
      engine: plan.engine,
      baseUrl: plan.baseUrl,
      probeUrl: plan.probeUrl ?? undefined,
      wantModels: !known || this.probes % MODELS_EVERY === 0,
      timeoutMs: this.timing.timeoutMs,
      signal,
      nowMs: this.deps.now,
    });
    if (run !== this.run || signal.aborted) return; // the run ended meanwhile: not this run's answer
    this.probes++;
    this.tracker.probe(outcome, this.deps.now());
    this.changed();
    if (outcome.probe.ok && plan.metrics && plan.baseUrl && !this.metricsMissing) await this.scrape(http, plan.baseUrl, plan.engine, run, signal);
  }

  private async scrape(http: EngineHttp, baseUrl: string, engine: NonNullable<ProbePlan["engine"]>, run: number, signal: AbortSignal): Promise<void> {
    const res = await scrapeMetricsText(http, { unit: this.name, baseUrl, timeoutMs: this.timing.timeoutMs, signal });
    if (run !== this.run || !res) return;
    if ("missing" in res) {
      this.metricsMissing = true; // started without metrics (llama.cpp --metrics, SGLang --enable-metrics): stop asking this run
      return;
    }
    const reading = readEngineMetrics(engine, res.text, this.deps.now(), this.metricsReading);
    if (!reading) return;
    this.metricsReading = reading;
    const m = reading.metrics;
    const l = reading.latency;
    this.deps.engineRow?.(this.name, {
      atMs: reading.atMs,
      running: m.requestsRunning,
      waiting: m.requestsWaiting,
      kvCacheUsage: m.kvCacheUsage,
      ttftP50Ms: l?.ttftP50Ms ?? null,
      ttftP95Ms: l?.ttftP95Ms ?? null,
      itlP50Ms: l?.itlP50Ms ?? null,
      itlP95Ms: l?.itlP95Ms ?? null,
      tokensPerSecond: m.generationTokensPerS,
    });
  }

  /** Tell the agent what changed (throttling progress-only updates) and record state/stage changes. */
  private changed(): void {
    const r = this.tracker.get();
    const key = keyOf(r);
    if (key === this.sentKey) return;
    const last = this.deps.lastRecorded(this.name);
    const stateOrStageChanged = !last ? r.state !== "unknown" || r.engine !== null : last.to.state !== r.state || last.to.stage !== r.stage;
    if (stateOrStageChanged) {
      const atMs = r.stage !== null && r.stageSinceMs ? r.stageSinceMs : r.state !== (last?.to.state ?? "unknown") ? r.sinceMs : this.deps.now();
      this.deps.record({
        unit: this.name,
        atMs,
        from: last ? { ...last.to } : null,
        to: { state: r.state, stage: r.stage },
        engine: r.engine,
        progress: r.progress ? { ...r.progress } : null,
        reason: r.reason,
        ...(r.reasonQuote && r.reason?.includes(r.reasonQuote) ? { reasonQuote: r.reasonQuote } : {}),
      });
    }
    const progressOnly = !stateOrStageChanged && key.split("\n").slice(1).join("\n") === this.sentKey.split("\n").slice(1).join("\n");
    const now = this.deps.now();
    if (progressOnly && now - this.sentAtMs < PROGRESS_EVERY_MS) {
      this.trailing ??= setTimeout(
        () => {
          this.trailing = null;
          this.changed();
        },
        PROGRESS_EVERY_MS - (now - this.sentAtMs),
      );
      this.trailing.unref?.();
      return;
    }
    this.sentKey = key;
    this.sentAtMs = now;
    this.deps.emit(this.name, r);
  }
}

/** What a change is judged by: everything but the probe's time (first line: the progress and the bar's line). */
function keyOf(r: Readiness): string {
  const p = r.probe;
  return [
    `${r.progress ? `${r.progress.done}/${r.progress.total}` : ""}|${r.line?.text ?? ""}`,
    `${r.state}|${r.stage}|${r.engine}|${r.reason}|${r.sinceMs}|${r.models.join(",")}`,
    p ? `${p.url}|${p.ok}|${p.status}|${p.detail ?? ""}` : "",
    `${(r.timings ?? []).length}|${JSON.stringify(r.vramMiB ?? {})}`,
  ].join("\n");
}
