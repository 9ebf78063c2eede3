import { afterEach, describe, expect, it, vi } from "vitest";
import { ProbeLoop } from "./probeLoop";

afterEach(() => vi.useRealTimers());

describe("ProbeLoop", () => {
  it("one probe in flight at most; the next one an interval after the last ended; none after stop", async () => {
    vi.useFakeTimers();
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const finish: (() => void)[] = [];
    const loop = new ProbeLoop(
      () => {
        calls++;
        inFlight++;
        most = Math.max(most, inFlight);
        return new Promise<void>((r) =>
          finish.push(() => {
            inFlight--;
            r();
          }),
        );
      },
      () => 2000,
    );
    loop.start(100);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(1);
    loop.soon(); // asked while one is in flight: after it, not beside it
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toBe(1);
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toBe(2); // "soon" right after the one in flight
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(1999);
    expect(calls).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toBe(3);
    loop.stop();
    finish.shift()!();
    await vi.advanceTimersByTimeAsync(60_000);
    expect({ calls, most }).toEqual({ calls: 3, most: 1 });
  });

  it("stop aborts the probe in flight; a throwing probe is reported and the loop goes on", async () => {
    vi.useFakeTimers();
    let signal: AbortSignal | null = null;
    const errors: string[] = [];
    let n = 0;
    const loop = new ProbeLoop(
      async (s) => {
        n++;
        signal = s;
        if (n === 1) throw new Error("boom");
        await new Promise((r) => setTimeout(r, 10_000));
      },
      () => 500,
      (e) => errors.push(e.message),
    );
    loop.start(0);
    await vi.advanceTimersByTimeAsync(600);
    expect({ n, errors }).toEqual({ n: 2, errors: ["boom"] });
    loop.stop();
    expect(signal!.aborted).toBe(true);
  });
});
