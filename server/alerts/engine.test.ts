/**
 * The alert engine evaluates on change: agent events re-evaluate only their host, and a pass
 * whose conditions are those of the last one touches no table; the tick still re-evaluates all.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../contract/events";
import type { UnitSummary } from "../contract/types";
import type { HostLink } from "../panel/fleet/hostLink";
import { LazyStore } from "../store/lazyStore";
import { openAlertRows } from "./alertStore";
import { loadAlertsConfig } from "./config";
import { AlertsService } from "./service";

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-alert-engine-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function unit(name: string, activeState: string): UnitSummary {
  return {
    name,
    description: name,
    loadState: "loaded",
    unitFileState: "enabled",
    activeState,
    subState: activeState === "failed" ? "failed" : "running",
    result: activeState === "failed" ? "exit-code" : "success",
    mainPid: 1,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: 1_000_000,
    job: null,
  } as unknown as UnitSummary;
}

function host(name: string, units: UnitSummary[]) {
  return {
    name,
    state: "connected",
    sinceMs: 0,
    error: null,
    bootId: "b",
    units: new Map(units.map((u) => [u.name, u])),
    gpu: null,
    telemetry: null,
    systemd: null,
  } as unknown as HostLink;
}

describe("the alert engine, on change", () => {
  it("re-evaluates only the hosts that sent events, and does no database work when no answer changed", async () => {
    const a = host("a", [unit("x.service", "failed")]);
    const b = host("b", [unit("y.service", "active")]);
    const listeners = new Set<(h: string, e: AgentEvent) => void>();
    const fleet = {
      all: () => [a, b],
      get: (n: string) => [a, b].find((l) => l.name === n),
      onHostEvent: (l: (h: string, e: AgentEvent) => void) => (listeners.add(l), () => listeners.delete(l)),
    };
    const store = new LazyStore({ dataDir: dir, secretKey: "ab".repeat(32) });
    let gets = 0;
    const counted = Object.assign(Object.create(store) as LazyStore, { get: () => (gets++, store.get()) });
    const base = loadAlertsConfig({});
    // no tick and no delivery polling within the test: only agent events make passes
    // no grouping window (a group waiting for its window makes full passes until it goes out), and
    // these hosts have no agent to diagnose: the diagnosis gives up at once, not after seconds
    const config = { ...base, tickMs: 3_600_000, settleMs: 0, groupWindowMs: 0, diagnosisTimeoutMs: 100, delivery: { ...base.delivery, pollMs: 3_600_000 } };
    const service = new AlertsService({ fleet, store: counted, config, panelUrl: "http://panel", log: () => undefined, clock: () => 10_000_000 } as never);
    const engine = service.engine;
    const emit = (h: string) => {
      for (const l of listeners) l(h, { kind: "transition" } as AgentEvent);
    };
    /** until the engine's work on what opened (its diagnosis, which ends in a full pass) is done and nothing reads the store */
    const settled = async () => {
      const db = (await store.get()).db;
      await expect
        .poll(async () => (await db.selectFrom("alerts").select("id").where("diagnosis_state", "=", "pending").execute()).length, { timeout: 20_000 })
        .toBe(0);
      for (let last = -1; gets !== last;) {
        last = gets;
        await new Promise((r) => setTimeout(r, 300));
      }
    };
    service.start();
    await new Promise((r) => setTimeout(r, 100));
    await engine.passNow();
    const s = await store.get();
    expect((await openAlertRows(s.db)).map((r) => [r.host, r.unit, r.rule])).toEqual([["a", "x.service", "unit-failed"]]);

    // events of b that change nothing: a pass, no database. First wait until the opening's own
    // work (its diagnosis, grouping) is done: on a busy machine it takes longer than a moment
    await settled();
    gets = 0;
    emit("b");
    await new Promise((r) => setTimeout(r, 400));
    expect(gets).toBe(0);

    // b's unit fails: its event re-evaluates b and the alert opens
    (b.units as Map<string, UnitSummary>).set("y.service", unit("y.service", "failed"));
    emit("b");
    await expect.poll(async () => (await openAlertRows(s.db)).map((r) => r.host).sort(), { timeout: 15_000 }).toEqual(["a", "b"]);

    // a changed with no event of its own: kept as last evaluated until a full pass (the tick's).
    // (An event that comes while a pass runs makes the next pass a full one: wait for b's to end.)
    await settled();
    (a.units as Map<string, UnitSummary>).set("x.service", unit("x.service", "active"));
    emit("b");
    await new Promise((r) => setTimeout(r, 400));
    expect((await openAlertRows(s.db)).map((r) => r.host).sort()).toEqual(["a", "b"]);
    await engine.passNow();
    expect((await openAlertRows(s.db)).map((r) => r.host)).toEqual(["b"]);
    service.stop();
    await s.close();
  }, 60_000);
});
