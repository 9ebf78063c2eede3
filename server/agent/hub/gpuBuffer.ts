/**
 * GPU samples as the agent hands them out: the latest one, the full samples of the last ~2 min
 * (diagnosis needs holders' PIDs and exit times), and the chart history. Attribution reads
 * /proc; two never overlap (a slow /proc must not pile up work): a raw sample that arrives while
 * one is being attributed is skipped.
 */
import { redactDeep } from "../../contract/redact";
import type { GpuRawSample, GpuSample } from "../../contract/types";

/** Turns raw nvidia-smi samples into attributed ones (memory → process → unit). */
export interface SampleAttributor {
  attribute(raw: GpuRawSample): Promise<GpuSample>;
}

/** Keeps GPU samples for the charts. */
export interface SampleHistory {
  push(sample: GpuSample): void;
  since(sinceMs: number, uuid?: string): GpuSample[];
  /** samples from before this agent started (the history store), oldest first */
  restore?(samples: GpuSample[]): void;
}

const RECENT_MS = 120_000;

export class GpuBuffer {
  private latestSample: GpuSample | null = null;
  private recentSamples: GpuSample[] = [];
  private attributing = false;

  constructor(
    private readonly attributor: SampleAttributor,
    readonly history: SampleHistory,
  ) {}

  latest(): GpuSample | null {
    return this.latestSample;
  }

  /** Full samples at or after sinceMs (at most the last ~2 min). */
  recent(sinceMs: number): GpuSample[] {
    return this.recentSamples.filter((s) => s.atMs >= sinceMs);
  }

  /** Attributes a raw sample and keeps it; null when skipped because one is still being attributed. Throws what attribution throws. */
  async ingest(raw: GpuRawSample): Promise<GpuSample | null> {
    if (this.attributing) return null;
    this.attributing = true;
    try {
      // holders' command lines may carry secrets: masked before the sample is kept, sent or stored
      const sample = redactDeep(await this.attributor.attribute(raw));
      this.latestSample = sample;
      this.recentSamples.push(sample);
      while (this.recentSamples.length > 0 && this.recentSamples[0]!.atMs < sample.atMs - RECENT_MS) this.recentSamples.shift();
      this.history.push(sample);
      return sample;
    } finally {
      this.attributing = false;
    }
  }
}
