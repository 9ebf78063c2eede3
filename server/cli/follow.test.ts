import { describe, expect, it } from "vitest";
import type { PanelEvent } from "../contract/fleet";
import type { Readiness } from "../contract/readiness";
import type { UnitSummary } from "../contract/types";
import { ActionFollower } from "./follow";
import { parseDuration } from "./duration";

const NAME = "vllm-a.service";
const ready = (state: Readiness["state"], sinceMs: number, stage: string | null = null): Readiness => ({
  state,
  engine: "vllm",
  stage,
  progress: null,
  reason: state === "failed" ? "CUDA out of memory" : null,
  sinceMs,
  probe: null,
  models: [],
});
const unit = (activeState: string, readiness?: Readiness): UnitSummary =>
  ({ name: NAME, activeState, subState: activeState === "active" ? "running" : "dead", result: "success", readiness }) as unknown as UnitSummary;
const unitEvent = (u: UnitSummary): PanelEvent => ({ kind: "unit", host: "h", unit: u });
const job = (jobId: number, result: string): PanelEvent => ({
  kind: "job",
  host: "h",
  job: { jobId, unit: NAME, jobType: "restart", phase: "finished", result, atMs: 0 },
});

describe("following an action", () => {
  it("waits for the job, then for a new 'serving' (not the one from before the restart)", () => {
    const lines: string[] = [];
    const f = new ActionFollower(NAME, "restart", "serving", (l) => lines.push(l));
    f.snapshot(unit("active", ready("serving", 100)));
    expect(f.sent({ jobId: 7 })).toBeNull();
    expect(f.event(unitEvent(unit("active", ready("serving", 100))))).toBeNull(); // the old run's
    expect(f.event(job(7, "done"))).toBeNull();
    expect(f.event(unitEvent(unit("active", ready("loading", 200, "loading weights"))))).toBeNull();
    expect(f.event(unitEvent(unit("active", ready("serving", 300))))).toMatchObject({ ok: true });
    expect(lines).toContain("loading: loading weights");
  });

  it("a job finished before the answer arrived still counts; a failed job or engine fails", () => {
    const f = new ActionFollower(NAME, "start", "running", () => {});
    f.snapshot(unit("inactive"));
    f.event(unitEvent(unit("active")));
    expect(f.event(job(9, "done"))).toBeNull();
    expect(f.sent({ jobId: 9 })).toMatchObject({ ok: true });
    const g = new ActionFollower(NAME, "restart", "running", () => {});
    g.snapshot(unit("active"));
    g.sent({ jobId: 3 });
    expect(g.event(job(3, "failed"))).toMatchObject({ ok: false, message: "the restart job ended with 'failed'" });
    const h = new ActionFollower(NAME, "restart", "serving", () => {});
    h.snapshot(unit("active", ready("serving", 1)));
    h.sent({ jobId: 4 });
    h.event(job(4, "done"));
    expect(h.event(unitEvent(unit("active", ready("failed", 5))))).toMatchObject({ ok: false, message: "the engine failed: CUDA out of memory" });
  });

  it("parses durations", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("20m")).toBe(1_200_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("soon")).toBeNull();
    expect(parseDuration("0s")).toBeNull();
  });
});
