import { afterEach, describe, expect, it } from "vitest";
import type { JournalEntry } from "../contract/types";
import { BoundedQueue } from "../streams/boundedQueue";
import { createCallerFactory } from "../trpc";
import { GpuAttributor } from "./gpu/attribution";
import { Hub } from "./hub/hub";
import { JournalStreamError, SharedJournals, type JournalSource } from "./journalShare";
import { createAgentRouter } from "./router";
import { SampleHistory } from "./sampleHistory";
import { createSimulatedHost } from "./simulator/index";

let seq = 0;
const line = (message: string): JournalEntry => ({ cursor: `c${++seq}`, atUsec: 1_000_000 + seq, unit: "u.service", priority: 6, pid: 1, message });

/** A journal whose live lines the test writes; counts the followers it had to run. */
class FakeJournal implements JournalSource {
  follows: { afterCursor?: string; signal: AbortSignal }[] = [];
  history: JournalEntry[] = [];
  private live = new Set<BoundedQueue<JournalEntry>>();
  write(message: string): JournalEntry {
    const e = line(message);
    this.history.push(e);
    for (const q of this.live) q.push(e);
    return e;
  }
  fail(err: Error): void {
    for (const q of this.live) q.fail(err);
  }
  async *followJournal(_name: string, signal: AbortSignal, opts: { afterCursor?: string } = {}) {
    this.follows.push({ afterCursor: opts.afterCursor, signal });
    const q = new BoundedQueue<JournalEntry>(100_000);
    if (opts.afterCursor) for (const e of this.history.slice(this.history.findIndex((h) => h.cursor === opts.afterCursor) + 1)) q.push(e);
    this.live.add(q);
    try {
      yield* q.drain(signal);
    } finally {
      this.live.delete(q);
    }
  }
  async journal(_name: string, lines: number) {
    return this.history.slice(-lines);
  }
  running(): number {
    return this.follows.filter((f) => !f.signal.aborted).length;
  }
}

/** Read a viewer's stream in the background. */
function viewer(share: SharedJournals, afterCursor?: string) {
  const ctl = new AbortController();
  const got: string[] = [];
  let error: unknown = null;
  const done = (async () => {
    try {
      for await (const e of share.follow("u.service", ctl.signal, afterCursor)) got.push(e.message);
    } catch (err) {
      error = err;
    }
  })();
  return { got, stop: () => ctl.abort(), done, error: () => error };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe("one journalctl --follow per unit", () => {
  it("ten viewers of a unit share one follower, each sees every line, and it stops with the last", async () => {
    const j = new FakeJournal();
    const share = new SharedJournals(j);
    const viewers = Array.from({ length: 10 }, () => viewer(share));
    await tick();
    j.write("a");
    j.write("b");
    await tick();
    expect(j.follows).toHaveLength(1);
    for (const v of viewers) expect(v.got).toEqual(["a", "b"]);
    for (const v of viewers.slice(0, 9)) v.stop();
    await tick();
    expect(j.running()).toBe(1);
    viewers[9]!.stop();
    await Promise.all(viewers.map((v) => v.done));
    expect(j.running()).toBe(0);
    expect(share.followerCount()).toBe(0);
    expect(share.viewers()).toBe(0);
  });

  it("the first viewer's cursor starts the follower after its last line (nothing lost on a reconnect)", async () => {
    const j = new FakeJournal();
    const before = j.write("seen");
    j.write("missed");
    const share = new SharedJournals(j);
    const v = viewer(share, before.cursor);
    await tick();
    expect(j.follows[0]!.afterCursor).toBe(before.cursor);
    expect(v.got).toEqual(["missed"]);
    v.stop();
    await v.done;
  });

  it("a viewer reconnecting to a running follower gets what it missed once, then the live lines", async () => {
    const j = new FakeJournal();
    const share = new SharedJournals(j);
    const first = viewer(share);
    await tick();
    const seen = j.write("one");
    j.write("two");
    j.write("three");
    await tick();
    const again = viewer(share, seen.cursor);
    await tick();
    j.write("four");
    await tick();
    expect(again.got).toEqual(["two", "three", "four"]);
    expect(j.follows).toHaveLength(1);
    first.stop();
    again.stop();
    await Promise.all([first.done, again.done]);
  });

  it("a viewer that falls behind is told to reconnect; the others go on", async () => {
    const j = new FakeJournal();
    const share = new SharedJournals(j, { queueLimit: 5 });
    const ctl = new AbortController();
    const slow = share.follow("u.service", ctl.signal)[Symbol.asyncIterator]();
    const first = slow.next(); // registers, then waits for a line
    const fast = viewer(share);
    await tick();
    j.write("x");
    await first;
    for (let i = 0; i < 20; i++) j.write(`line ${i}`);
    await tick();
    await expect(slow.next()).rejects.toThrow(JournalStreamError);
    expect(fast.got).toHaveLength(21);
    fast.stop();
    await fast.done;
  });

  it("refuses viewers beyond the agent's limit, and a failing follower ends every stream with its error", async () => {
    const j = new FakeJournal();
    const share = new SharedJournals(j, { maxViewers: 2 });
    const a = viewer(share);
    const b = viewer(share);
    const c = viewer(share);
    await c.done;
    expect(c.error()).toBeInstanceOf(JournalStreamError);
    expect(String(c.error())).toMatch(/already serves 2 journal streams/);
    j.fail(new Error("journalctl --follow ended (exit 1)"));
    await Promise.all([a.done, b.done]);
    expect(String(a.error())).toMatch(/journalctl --follow ended/);
    expect(String(b.error())).toMatch(/journalctl --follow ended/);
    expect(share.followerCount()).toBe(0);
  });
});

describe("through the agent's units.followJournal", () => {
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await stop?.();
    stop = null;
  });

  it("twenty subscriptions to a unit run one follower on the host", async () => {
    const globs = ["vllm-*.service"];
    const host = createSimulatedHost({ unitGlobs: globs, gpuIntervalMs: 200, timing: { speed: 20 } });
    const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
    await hub.start();
    const shutdown = new AbortController();
    stop = async () => {
      shutdown.abort();
      await hub.close();
    };
    let follows = 0;
    const follow = host.systemd.followJournal.bind(host.systemd);
    host.systemd.followJournal = (name, signal, opts) => {
      follows++;
      return follow(name, signal, opts);
    };
    const router = createAgentRouter({ hub, unitGlobs: globs, shutdown: shutdown.signal });
    const ctl = new AbortController();
    const caller = createCallerFactory(router)({ actor: { user: "t", role: "admin", unitPatterns: [] } }, { signal: ctl.signal });
    const streams = await Promise.all(Array.from({ length: 20 }, () => caller.units.followJournal({ name: "vllm-embed-small.service" })));
    const iterators = streams.map((s) => (s as AsyncIterable<unknown>)[Symbol.asyncIterator]());
    const firsts = iterators.map((it) => it.next());
    await caller.units.restart({ name: "vllm-embed-small.service" }); // writes journal lines
    await Promise.all(firsts);
    expect(follows).toBe(1);
    ctl.abort();
    await Promise.all(iterators.map((it) => it.return?.()));
  }, 20_000);
});
