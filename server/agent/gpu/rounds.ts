/** Round assembly (pure): the rows `nvidia-smi --query-gpu … -lms N` streams, grouped into one sample's GPUs. */
import type { GpuReading } from "../../contract/types";

export interface GpuRound {
  atMs: number;
  gpus: GpuReading[];
}

/**
 * Groups streamed rows into rounds. In loop mode nvidia-smi prints no separator between
 * rounds, so a round ends when (a) it holds exactly the GPUs of the previous round (the
 * common case: emitted with no delay), (b) a GPU repeats (the next round has begun), or
 * (c) the stream goes quiet (`flush`, driven by a timer) — which covers the first round and
 * a changed GPU set.
 */
export class RoundAssembler {
  private current = new Map<string, GpuReading>();
  private firstAtMs = 0;
  private expected: Set<string> | null = null;

  push(row: GpuReading, nowMs: number): GpuRound[] {
    const done: GpuRound[] = [];
    if (this.current.has(row.uuid)) done.push(this.finish());
    if (this.current.size === 0) this.firstAtMs = nowMs;
    this.current.set(row.uuid, row);
    const expected = this.expected;
    if (expected && this.current.size === expected.size && [...this.current.keys()].every((u) => expected.has(u))) {
      done.push(this.finish());
    }
    return done;
  }

  /** The quiet gap elapsed: whatever is buffered is a round. */
  flush(): GpuRound | null {
    return this.current.size > 0 ? this.finish() : null;
  }

  pending(): number {
    return this.current.size;
  }

  /** A new process: forget everything, including the GPU set (it may be why we restarted). */
  reset(): void {
    this.current.clear();
    this.expected = null;
  }

  private finish(): GpuRound {
    const round = { atMs: this.firstAtMs, gpus: [...this.current.values()] };
    this.expected = new Set(this.current.keys());
    this.current.clear();
    return round;
  }
}
