import { describe, expect, it } from "vitest";
import type { EngineHistoryRow } from "../../contract/readiness";
import { EngineHistory } from "./engineHistory";

const row = (atMs: number, over: Partial<EngineHistoryRow> = {}): EngineHistoryRow => ({
  atMs,
  running: 4,
  waiting: 0,
  kvCacheUsage: 0.3,
  ttftP50Ms: 80,
  ttftP95Ms: 200,
  itlP50Ms: 20,
  itlP95Ms: 40,
  tokensPerSecond: 100,
  ...over,
});

describe("EngineHistory", () => {
  it("keeps 24 h (every scrape for the last hour, then one per 30 s) and answers at most `points` rows, each bucket's peak latency", () => {
    const h = new EngineHistory();
    const start = Date.UTC(2026, 11, 1);
    for (let t = 0; t < 26 * 3600; t += 5) h.push("vllm-a.service", row(start + t * 1000, t === 20 * 3600 ? { ttftP95Ms: 9000, waiting: 31 } : {}));
    const end = start + (26 * 3600 - 5) * 1000;
    const all = h.query("vllm-a.service", 0, 4000);
    expect(all[0]!.atMs).toBeGreaterThanOrEqual(end - 24 * 3600_000);
    const rows = h.query("vllm-a.service", 0, 500);
    expect(rows.length).toBeLessThanOrEqual(500);
    expect(rows.filter((r) => r.ttftP95Ms === 9000 && r.waiting === 31)).toHaveLength(1);
    expect(rows.every((r, i) => i === 0 || r.atMs > rows[i - 1]!.atMs)).toBe(true);
    expect(rows.at(-1)!.atMs).toBe(end);
    expect(h.query("other.service", 0, 10)).toEqual([]);
  });

  it("not reported stays null in a bucket with nothing reported; tokens/s is the bucket's mean", () => {
    const h = new EngineHistory();
    for (let i = 0; i < 100; i++) h.push("u", row(i * 1000, { ttftP50Ms: null, tokensPerSecond: i % 2 ? 200 : 100 }));
    const rows = h.query("u", 0, 10);
    expect(rows.every((r) => r.ttftP50Ms === null)).toBe(true);
    expect(rows[0]!.tokensPerSecond).toBeCloseTo(150);
  });
});

describe("EngineHistory in the agent's history store", () => {
  it("writes one row per 30 s, and a new run restores the day from the store", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { HistoryStore } = await import("../historyStore");
    const dir = mkdtempSync(join(tmpdir(), "gpudeck-engine-history-"));
    try {
      const store = HistoryStore.open(dir);
      const now = Date.now();
      const h = new EngineHistory({ persist: (u, r) => store.addEngineRow(u, r) });
      for (let t = 0; t < 300; t += 5) h.push("vllm-a.service", row(now - 300_000 + t * 1000, { ttftP95Ms: 100 + t }));
      store.close();
      const again = HistoryStore.open(dir);
      const loaded = again.loadEngineRows(now - 24 * 3600_000);
      expect(loaded.get("vllm-a.service")).toHaveLength(10); // 300 s at one per 30 s
      const restored = new EngineHistory();
      restored.restore(loaded, now);
      expect(restored.query("vllm-a.service", 0, 100).map((r) => r.ttftP95Ms)).toEqual(loaded.get("vllm-a.service")!.map((r) => r.ttftP95Ms));
      // retention: older than 24 h is pruned
      again.addEngineRow("vllm-a.service", row(now - 25 * 3600_000));
      expect(again.prune(now)).toBeGreaterThanOrEqual(1);
      expect(again.loadEngineRows(0).get("vllm-a.service")).toHaveLength(10);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
