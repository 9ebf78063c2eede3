/**
 * A unit's probe schedule: never more than one probe in flight, the next one only after the
 * last finished (plus the interval), no probe at all while stopped, and a pending one cut short
 * when the unit stops. The interval comes from the caller each time (2 s while loading, slower
 * when serving); `soon()` brings the next probe forward (the engine just logged its ready line).
 */
export interface ProbeTiming {
  /** while not serving, for the first `fastForMs` of a run */
  fastMs: number;
  fastForMs: number;
  /** while not serving, after that */
  slowMs: number;
  /** while serving */
  servingMs: number;
  /** per request */
  timeoutMs: number;
  /** the first probe after a run begins */
  firstMs: number;
}

export const DEFAULT_PROBE_TIMING: ProbeTiming = { fastMs: 2000, fastForMs: 120_000, slowMs: 5000, servingMs: 10_000, timeoutMs: 2000, firstMs: 1000 };

export class ProbeLoop {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private ctl: AbortController | null = null;
  private inFlight = false;
  private active = false;
  private wantSoon = false;

  constructor(
    private readonly probeOnce: (signal: AbortSignal) => Promise<void>,
    /** ms until the next probe, asked after each one */
    private readonly nextDelay: () => number,
    private readonly onError: (err: Error) => void = () => undefined,
  ) {}

  start(firstDelayMs: number): void {
    this.active = true;
    if (!this.inFlight) this.schedule(firstDelayMs);
  }

  stop(): void {
    this.active = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ctl?.abort();
  }

  /** Probe as soon as possible (after the one in flight, if any). */
  soon(): void {
    if (!this.active) return;
    if (this.inFlight) this.wantSoon = true;
    else this.schedule(0);
  }

  isInFlight(): boolean {
    return this.inFlight;
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fire(), ms);
    this.timer.unref?.();
  }

  private async fire(): Promise<void> {
    this.timer = null;
    if (!this.active || this.inFlight) return;
    this.inFlight = true;
    const ctl = new AbortController();
    this.ctl = ctl;
    try {
      await this.probeOnce(ctl.signal);
    } catch (err) {
      this.onError(err as Error);
    } finally {
      this.inFlight = false;
      this.ctl = null;
    }
    if (!this.active) return;
    const soon = this.wantSoon;
    this.wantSoon = false;
    this.schedule(soon ? 0 : this.nextDelay());
  }
}
