import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReadinessTransition } from "../../contract/readiness";
import { HISTORY_DB_FILE, HistoryStore } from "../historyStore";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpudeck-readiness-store-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const NOW = Date.now();
const t = (unit: string, atMs: number, state: ReadinessTransition["to"]["state"], stage: string | null = null): ReadinessTransition => ({
  unit,
  atMs,
  from: null,
  to: { state, stage },
  engine: "vllm",
  progress: null,
  reason: null,
});

describe("readiness transitions in the history store", () => {
  it("are kept across a reopen, newest per unit capped, oldest first", () => {
    const store = HistoryStore.open(dir);
    store.addReadinessTransition(t("a.service", NOW - 3000, "loading", "loading weights"));
    store.addReadinessTransition(t("a.service", NOW - 2000, "loading", "capturing CUDA graphs"));
    store.addReadinessTransition(t("a.service", NOW - 1000, "serving"));
    store.addReadinessTransition(t("b.service", NOW - 500, "failed"));
    store.close();
    const again = HistoryStore.open(dir);
    const loaded = again.loadReadinessTransitions(2);
    expect(loaded.get("a.service")!.map((x) => x.to)).toEqual([
      { state: "loading", stage: "capturing CUDA graphs" },
      { state: "serving", stage: null },
    ]);
    expect(loaded.get("b.service")).toHaveLength(1);
    again.close();
  });

  it("are pruned with the events' retention, keeping the one in force at the cutoff", () => {
    const store = HistoryStore.open(dir, { eventsMs: 60_000 });
    store.addReadinessTransition(t("a.service", NOW - 300_000, "loading"));
    store.addReadinessTransition(t("a.service", NOW - 200_000, "serving"));
    store.addReadinessTransition(t("a.service", NOW - 1000, "not-serving"));
    store.prune(NOW);
    expect(
      store
        .loadReadinessTransitions(10)
        .get("a.service")!
        .map((x) => x.to.state),
    ).toEqual(["serving", "not-serving"]);
    store.close();
  });

  it("an older store (schema 2) gains the tables (readiness, engine rows: schema 4)", () => {
    const db = new Database(join(dir, HISTORY_DB_FILE));
    db.exec("CREATE TABLE transitions (unit TEXT NOT NULL, at_usec INTEGER NOT NULL, body TEXT NOT NULL)");
    db.pragma("user_version = 2");
    db.close();
    const store = HistoryStore.open(dir);
    store.addReadinessTransition(t("a.service", NOW, "serving"));
    expect(store.loadReadinessTransitions(5).get("a.service")).toHaveLength(1);
    expect(store.loadEngineRows(0).size).toBe(0);
    store.close();
    const check = new Database(join(dir, HISTORY_DB_FILE));
    expect(check.pragma("user_version", { simple: true })).toBe(4);
    check.close();
  });
});
