import { describe, expect, it, vi } from "vitest";
import type { JournalEntry } from "../../contract/types";
import { JournalFeed } from "./journalFeed";

const entry = (cursor: string, unit = "a.service"): JournalEntry => ({ cursor, atUsec: 1, unit, priority: 6, pid: 9, message: cursor });

/** A follow() that hands out what the test pushes, and records how it was called. */
function fakeJournal() {
  const calls: { names: string[]; afterCursor?: string }[] = [];
  const streams: { push(e: JournalEntry): void; fail(err: Error): void; signal: AbortSignal }[] = [];
  async function* follow(names: string[], signal: AbortSignal, opts: { afterCursor?: string } = {}) {
    calls.push({ names, ...opts });
    const queue: (JournalEntry | Error)[] = [];
    let wake: (() => void) | null = null;
    streams.push({ push: (e) => (queue.push(e), wake?.()), fail: (err) => (queue.push(err), wake?.()), signal });
    signal.addEventListener("abort", () => wake?.());
    while (!signal.aborted) {
      if (queue.length === 0) await new Promise<void>((r) => (wake = r));
      const next = queue.shift();
      if (next instanceof Error) throw next;
      if (next) yield next;
    }
  }
  return { follow, calls, streams };
}

describe("JournalFeed", () => {
  it("one follower for every unit; a new set restarts it after the last entry delivered", async () => {
    const j = fakeJournal();
    const got: string[] = [];
    const feed = new JournalFeed(
      j.follow,
      (e) => got.push(e.cursor),
      () => undefined,
    );
    feed.setUnits(["b.service", "a.service"], "backlog-9");
    await vi.waitFor(() => expect(j.calls).toHaveLength(1));
    expect(j.calls[0]).toEqual({ names: ["a.service", "b.service"], afterCursor: "backlog-9" });
    j.streams[0]!.push(entry("c1"));
    await vi.waitFor(() => expect(got).toEqual(["c1"]));
    feed.setUnits(["a.service", "b.service"]); // the same set: nothing happens
    feed.setUnits(["a.service", "b.service", "c.service"]);
    await vi.waitFor(() => expect(j.calls).toHaveLength(2));
    expect(j.streams[0]!.signal.aborted).toBe(true);
    expect(j.calls[1]).toEqual({ names: ["a.service", "b.service", "c.service"], afterCursor: "c1" });
    feed.setUnits([]);
    expect(j.streams[1]!.signal.aborted).toBe(true);
    feed.close();
  });

  it("a failing journalctl is logged once and retried with backoff, continuing after the last entry", async () => {
    const j = fakeJournal();
    const log: string[] = [];
    const feed = new JournalFeed(
      j.follow,
      () => undefined,
      (m) => log.push(m),
      { min: 20, max: 40 },
    );
    feed.setUnits(["a.service"]);
    await vi.waitFor(() => expect(j.streams).toHaveLength(1));
    j.streams[0]!.push(entry("c7"));
    j.streams[0]!.fail(new Error("journalctl --follow ended (exit 1): Failed to open journal"));
    await vi.waitFor(() => expect(j.streams).toHaveLength(2));
    j.streams[1]!.fail(new Error("again"));
    await vi.waitFor(() => expect(j.streams).toHaveLength(3));
    expect(j.calls[2]).toEqual({ names: ["a.service"], afterCursor: "c7" });
    expect(log).toEqual([
      "readiness: cannot follow the engines' journal (journalctl --follow ended (exit 1): Failed to open journal); load stages are unknown until it works, probes go on",
    ]);
    j.streams[2]!.push(entry("c8"));
    await vi.waitFor(() => expect(log).toHaveLength(2));
    expect(log[1]).toBe("readiness: reading the engines' journal works again");
    feed.close();
  });

  it("without a journal to follow it does nothing", () => {
    const feed = new JournalFeed(
      undefined,
      () => undefined,
      () => undefined,
    );
    feed.setUnits(["a.service"]);
    expect(feed.followed()).toEqual(["a.service"]);
    feed.close();
  });
});
