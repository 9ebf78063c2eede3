import { describe, expect, it } from "vitest";
import type { Operation } from "../../contract/operations";
import type { Readiness } from "../../contract/readiness";
import type { UnitSummary } from "../../contract/types";
import type { OperationRequest } from "../operations/runner";
import { parseReadinessConfig } from "../readiness/config";
import { SelfHealer } from "./healer";

const UNIT = "vllm-a.service";
const S = 1000;

/** The healer's world, on a fake clock: one unit, its readiness and tracker, the operations it begins. */
function world() {
  let now = 1_000_000;
  const unit: UnitSummary = {
    name: UNIT,
    description: "",
    activeState: "active",
    subState: "running",
    loadState: "loaded",
    unitFileState: "enabled",
    result: "success",
    mainPid: 42,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: 0,
    job: null,
  };
  let readiness: Readiness = { state: "serving", engine: "vllm", stage: null, progress: null, reason: null, sinceMs: now, probe: null, models: [] };
  let served = true;
  let failing: { count: number; sinceMs: number } | null = null;
  let crashLoop = false;
  const fields: ((u: UnitSummary) => Partial<UnitSummary> | null)[] = [];
  const requests: OperationRequest[] = [];
  const ops = new Map<string, Operation>();
  let refreshed = 0;
  const hub = {
    units: () => [unit],
    unit: () => unit,
    addUnitFields: (f: (u: UnitSummary) => Partial<UnitSummary> | null) => (fields.push(f), () => undefined),
    refreshUnit: () => void refreshed++,
  };
  const monitor = {
    readiness: () => readiness,
    watchOf: () => ({ running: true, plan: {} as never, tracker: { probeFailures: () => failing, servedInRun: () => served } as never }),
  };
  const operations = {
    begin: async (req: OperationRequest) => {
      requests.push(req);
      const op = {
        id: `b-o${requests.length}`,
        unit: req.unit,
        kind: req.kind,
        step: "stopping",
        user: req.user,
        message: "Stopping it.",
        steps: [],
      } as unknown as Operation;
      ops.set(op.id, op);
      return op;
    },
    get: (id: string) => ops.get(id) ?? null,
    list: () => [...ops.values()],
  };
  const healer = new SelfHealer(
    hub,
    monitor,
    operations,
    { marker: () => (crashLoop ? ({} as never) : null) },
    {
      config: parseReadinessConfig(JSON.stringify({ "vllm-*.service": { healAfter: "5m" } })),
      now: () => now,
      tickMs: 3600_000,
    },
  );
  const marker = () => fields.map((f) => f(unit)).find((x) => x)?.selfHeal ?? null;
  const settle = () => new Promise((r) => setTimeout(r, 0));
  return {
    healer,
    requests,
    ops,
    marker,
    settle,
    refreshed: () => refreshed,
    at: (ms: number) => void (now = ms),
    get now() {
      return now;
    },
    wedge: (sinceMs: number) => {
      readiness = {
        ...readiness,
        state: "not-serving",
        reason: "/health answered 503",
        sinceMs: sinceMs + 2 * S,
        probe: { url: "http://127.0.0.1:8000/health", ok: false, status: 503, atMs: sinceMs },
      };
      failing = { count: 4, sinceMs };
      served = true;
    },
    loading: () => {
      readiness = { ...readiness, state: "loading", stage: "loading weights", sinceMs: now, estimatedReadyAtMs: now + 120 * S };
      failing = null;
      served = false;
    },
    serving: () => {
      readiness = { ...readiness, state: "serving", stage: null, sinceMs: now };
      served = true;
    },
    set crashLoop(v: boolean) {
      crashLoop = v;
    },
  };
}

describe("SelfHealer (fake clock)", () => {
  it("restarts a wedged unit once healAfter has passed, as gpudeck (self-heal), and follows it until it serves again", async () => {
    const w = world();
    const t0 = w.now;
    w.wedge(t0);
    w.at(t0 + 5 * 60 * S - 1);
    w.healer.tick();
    expect(w.requests).toEqual([]);
    w.at(t0 + 5 * 60 * S);
    w.healer.tick();
    await w.settle();
    expect(w.requests).toHaveLength(1);
    expect(w.requests[0]).toMatchObject({ unit: UNIT, kind: "restart", user: "gpudeck (self-heal)", sourceAddr: null });
    expect(w.requests[0]!.reason).toMatch(
      /^self-heal: its readiness probe failed for 5 min \(4 in a row since \d\d:\d\d:\d\d UTC, last: \/health answered 503\)$/,
    );
    expect(w.marker()).toMatchObject({ state: "restarting", operationId: "b-o1", inLastHour: 1, max: 2 });
    // no second one while it runs
    w.healer.tick();
    expect(w.requests).toHaveLength(1);

    w.ops.get("b-o1")!.step = "started";
    w.loading();
    w.healer.tick();
    expect(w.marker()).toMatchObject({ state: "loading" });
    expect(w.marker()!.message).toMatch(/it is starting again \(loading weights, expected to serve around \d\d:\d\d:\d\d UTC\)\.$/);
    w.at(w.now + 60 * S);
    w.serving();
    w.healer.tick();
    expect(w.marker()).toMatchObject({ state: "back" });
    expect(w.marker()!.message).toMatch(/^gpudeck restarted it by itself at \d\d:\d\d:\d\d UTC \(self-heal\); it serves again since \d\d:\d\d:\d\d UTC\.$/);
    // shown for an hour after, then gone
    w.at(t0 + 5 * 60 * S + 3600 * S + 1);
    w.healer.tick();
    expect(w.marker()).toBeNull();
  });

  it("holds back under the crash-loop brake and at healMax an hour, saying so; a person's operation holds it back too", async () => {
    const w = world();
    const heal = async () => {
      w.wedge(w.now - 5 * 60 * S);
      w.healer.tick();
      await w.settle();
      const op = [...w.ops.values()].at(-1);
      if (op) op.step = "started";
      w.serving();
      w.healer.tick();
    };
    w.crashLoop = true;
    w.wedge(w.now - 5 * 60 * S);
    w.healer.tick();
    expect(w.requests).toHaveLength(0);
    expect(w.marker()).toMatchObject({
      state: "held-back",
      message: "Not restarted by self-heal: the unit is restarting in a loop (the crash-loop brake is on).",
    });
    // serving again: no word on why it was not restarted
    w.serving();
    w.healer.tick();
    expect(w.marker()).toBeNull();
    w.crashLoop = false;
    await heal();
    w.at(w.now + 10 * 60 * S);
    await heal();
    expect(w.requests).toHaveLength(2);
    w.at(w.now + 10 * 60 * S);
    w.wedge(w.now - 5 * 60 * S);
    w.healer.tick();
    expect(w.requests).toHaveLength(2);
    expect(w.marker()).toMatchObject({ state: "held-back", inLastHour: 2, max: 2 });
    expect(w.marker()!.message).toBe("Not restarted by self-heal: it already restarted it 2 times in the last hour (healMax 2).");
    // someone's operation runs: held back while it does
    w.ops.set("b-o9", { id: "b-o9", unit: UNIT, step: "waiting-for-gpus", user: "alice" } as unknown as Operation);
    w.at(w.now + 60 * 60 * S);
    w.healer.tick();
    expect(w.requests).toHaveLength(2);
    expect(w.marker()!.message).toBe("Not restarted by self-heal: a GPU-aware operation by alice is running (operation b-o9, waiting-for-gpus).");
    w.healer.close();
  });
});
