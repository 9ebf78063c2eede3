import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { BoundedQueue, StreamOverflow } from "./boundedQueue";
import { linkSignals } from "./signals";

async function take<T>(gen: AsyncGenerator<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) {
    const r = await gen.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe("BoundedQueue", () => {
  it("yields what was pushed before and after the consumer started, in order", async () => {
    const q = new BoundedQueue<number>(10);
    q.push(1);
    const gen = q.drain(new AbortController().signal);
    const first = take(gen, 3);
    q.push(2);
    setTimeout(() => q.push(3), 5);
    expect(await first).toEqual([1, 2, 3]);
  });

  it("throws StreamOverflow once more than the limit waited, without sending the stale rest", async () => {
    const q = new BoundedQueue<number>(3);
    for (let i = 0; i < 5; i++) q.push(i);
    expect(q.length).toBe(3);
    const gen = q.drain(new AbortController().signal);
    await expect(gen.next()).rejects.toBeInstanceOf(StreamOverflow);
  });

  it("sends queued items before a failure, then throws it", async () => {
    const q = new BoundedQueue<string>(10);
    q.push("a");
    q.fail(new Error("agent went away"));
    const gen = q.drain(new AbortController().signal);
    expect((await gen.next()).value).toBe("a");
    await expect(gen.next()).rejects.toThrow("agent went away");
  });

  it("returns after the queued items when the source ends, and at once when aborted", async () => {
    const q = new BoundedQueue<number>(10);
    q.push(1);
    q.end();
    expect(await take(q.drain(new AbortController().signal), 5)).toEqual([1]);

    const idle = new BoundedQueue<number>(10);
    const ctl = new AbortController();
    const pending = idle.drain(ctl.signal).next();
    ctl.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(getEventListeners(ctl.signal, "abort")).toHaveLength(0);
  });

  it("drop() removes queued items that a replay already sent", async () => {
    const q = new BoundedQueue<number>(10);
    [1, 2, 3, 4].forEach((n) => q.push(n));
    q.drop((n) => n <= 2);
    q.end();
    expect(await take(q.drain(new AbortController().signal), 5)).toEqual([3, 4]);
  });
});

describe("linkSignals", () => {
  it("aborts with any source and leaves no listener behind once disposed", () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals(a.signal, undefined, b.signal);
    expect(getEventListeners(b.signal, "abort")).toHaveLength(1);
    b.abort();
    expect(linked.signal.aborted).toBe(true);
    linked.dispose();
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
  });

  it("is aborted at once when a source already is", () => {
    const a = new AbortController();
    a.abort();
    expect(linkSignals(a.signal).signal.aborted).toBe(true);
  });
});
