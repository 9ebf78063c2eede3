/** Journal reads on the host are bounded (8 at once, 32 waiting, then a sentence); diagnoses and crash-loop reports are cached briefly; a rejoin reads 1000 lines. */
import { afterEach, describe, expect, it } from "vitest";
import type { JournalEntry } from "../contract/types";
import { createCallerFactory } from "../trpc";
import { GpuAttributor } from "./gpu/attribution";
import { Hub } from "./hub/hub";
import { BriefCache, JOURNAL_READS_CONCURRENT, JOURNAL_READS_QUEUED, JournalReads, limitJournalReads } from "./journalReads";
import { REJOIN_BACKLOG_LINES, SharedJournals } from "./journalShare";
import { createAgentRouter } from "./router";
import { SampleHistory } from "./sampleHistory";
import { createSimulatedHost } from "./simulator/index";

const tick = () => new Promise((r) => setTimeout(r, 10));

describe("JournalReads", () => {
  it("runs 8 at once, queues 32, refuses the next with TOO_MANY_REQUESTS and a sentence", async () => {
    const reads = new JournalReads();
    let running = 0;
    let most = 0;
    const gates: (() => void)[] = [];
    const read = () =>
      reads.run(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return "ok";
      });
    const admitted = Array.from({ length: JOURNAL_READS_CONCURRENT + JOURNAL_READS_QUEUED }, read);
    await tick();
    expect(reads.stats).toEqual({ running: 8, waiting: 32 });
    await expect(read()).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: expect.stringMatching(/busy reading its journal.*try again in a few seconds/),
    });
    while (gates.length || running) {
      gates.splice(0).forEach((g) => g());
      await tick();
    }
    expect(await Promise.all(admitted)).toHaveLength(40);
    expect(most).toBe(8);
    expect(reads.stats).toEqual({ running: 0, waiting: 0 });
  });

  it("a failed read frees its slot", async () => {
    const reads = new JournalReads(1, 0);
    await expect(reads.run(() => Promise.reject(new Error("journalctl failed")))).rejects.toThrow(/journalctl failed/);
    expect(await reads.run(async () => 1)).toBe(1);
  });
});

describe("BriefCache", () => {
  it("answers one load per key within its lifetime, then loads again; failures are not kept", async () => {
    let now = 0;
    const cache = new BriefCache<number>(3000, 10, () => now);
    let loads = 0;
    const load = async () => ++loads;
    expect(await Promise.all([cache.get("a", load), cache.get("a", load)])).toEqual([1, 1]);
    now = 2999;
    expect(await cache.get("a", load)).toBe(1);
    now = 3000;
    expect(await cache.get("a", load)).toBe(2);
    await expect(cache.get("b", () => Promise.reject(new Error("no")))).rejects.toThrow();
    expect(await cache.get("b", load)).toBe(3);
  });
});

describe("through the agent's router on a simulated host", () => {
  let stop: (() => Promise<void>) | null = null;
  afterEach(async () => {
    await stop?.();
    stop = null;
  });

  it("60 diagnoses and crash-loop reports at once: at most 8 journal reads run, and the cache leaves a handful", async () => {
    const globs = ["vllm-*.service"];
    const host = createSimulatedHost({ unitGlobs: globs, gpuIntervalMs: 200, timing: { speed: 20 } });
    let running = 0;
    let most = 0;
    let reads = 0;
    const inner = host.systemd.journal.bind(host.systemd);
    host.systemd.journal = async (name, lines) => {
      reads++;
      running++;
      most = Math.max(most, running);
      try {
        await tick();
        return await inner(name, lines);
      } finally {
        running--;
      }
    };
    limitJournalReads(host);
    const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
    await hub.start();
    const shutdown = new AbortController();
    stop = async () => {
      shutdown.abort();
      await hub.close();
    };
    const caller = createCallerFactory(createAgentRouter({ hub, unitGlobs: globs, shutdown: shutdown.signal }))({
      actor: { user: "v", role: "viewer", unitPatterns: [] },
    });
    const units = hub.units().map((u) => u.name);
    expect(units.length).toBeGreaterThan(1);
    const before = reads;
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 2 ? caller.units.diagnose({ name: units[i % units.length]! }) : caller.units.crashLoop({ name: units[i % units.length]! }),
      ),
    );
    expect(results).toHaveLength(60);
    expect(most).toBeLessThanOrEqual(JOURNAL_READS_CONCURRENT);
    // one diagnosis and one report per unit, not sixty reads
    expect(reads - before).toBeLessThanOrEqual(units.length * 2);
  }, 20_000);
});

describe("a shared follower", () => {
  it(`reads the last ${REJOIN_BACKLOG_LINES} lines (not 5000) for a viewer rejoining it`, async () => {
    const asked: number[] = [];
    const source = {
      journal: async (_name: string, lines: number): Promise<JournalEntry[]> => {
        asked.push(lines);
        return [];
      },
      async *followJournal(_name: string, signal: AbortSignal) {
        await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      },
    };
    const share = new SharedJournals(source);
    const ctl = new AbortController();
    const first = share.follow("u.service", ctl.signal)[Symbol.asyncIterator]();
    void first.next().catch(() => undefined);
    await tick();
    const again = share.follow("u.service", ctl.signal, "c1")[Symbol.asyncIterator]();
    void again.next().catch(() => undefined);
    await tick();
    ctl.abort();
    expect(REJOIN_BACKLOG_LINES).toBe(1000);
    expect(asked).toEqual([1000]);
  });
});

describe("a shared follower's recent lines", () => {
  const entry = (n: number): JournalEntry => ({ cursor: `c${n}`, atUsec: 1_000_000 + n, unit: "u.service", priority: 6, pid: 7, message: `line ${n}` });
  /** a follower that emits what `emit` is given; every one-shot read is recorded */
  function source() {
    const asked: number[] = [];
    let emit: (e: JournalEntry) => void = () => {};
    return {
      asked,
      emit: (e: JournalEntry) => emit(e),
      src: {
        journal: async (_name: string, lines: number): Promise<JournalEntry[]> => {
          asked.push(lines);
          return [];
        },
        async *followJournal(_name: string, signal: AbortSignal): AsyncGenerator<JournalEntry> {
          const waiting: JournalEntry[] = [];
          let wake: (() => void) | null = null;
          emit = (e) => {
            waiting.push(e);
            wake?.();
          };
          signal.addEventListener("abort", () => wake?.(), { once: true });
          while (!signal.aborted) {
            if (waiting.length) yield waiting.shift()!;
            else await new Promise<void>((r) => (wake = r));
          }
        },
      },
    };
  }
  /** the next `n` cursors, or what came within 2 s */
  async function take(it: AsyncIterator<JournalEntry>, n: number): Promise<string[]> {
    const out: string[] = [];
    const late = new Promise<null>((r) => setTimeout(() => r(null), 2000));
    while (out.length < n) {
      const next = await Promise.race([it.next(), late]);
      if (next === null) break;
      out.push(next.value!.cursor);
    }
    return out;
  }

  it("a viewer rejoining after a line the follower still holds gets what it missed from memory, without a journalctl read", async () => {
    const s = source();
    const share = new SharedJournals(s.src);
    const ctl = new AbortController();
    const first = share.follow("u.service", ctl.signal)[Symbol.asyncIterator]();
    const reading = take(first, 5);
    await tick();
    for (let i = 1; i <= 5; i++) s.emit(entry(i));
    expect(await reading).toEqual(["c1", "c2", "c3", "c4", "c5"]);
    // a second browser that saw up to c2 reconnects
    const again = share.follow("u.service", ctl.signal, "c2")[Symbol.asyncIterator]();
    const missed = take(again, 4);
    await tick();
    s.emit(entry(6));
    expect(await missed).toEqual(["c3", "c4", "c5", "c6"]);
    expect(s.asked).toEqual([]);
    // a cursor the follower never saw: one read, as before
    const older = share.follow("u.service", ctl.signal, "c0-long-ago")[Symbol.asyncIterator]();
    void older.next().catch(() => undefined);
    await tick();
    expect(s.asked).toEqual([REJOIN_BACKLOG_LINES]);
    ctl.abort();
  });
});
