import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import { fault, operation, readiness } from "@/components/live/eventFixtures";
import type { ReadinessTransition } from "@/server/contract/readiness";
import type { UnitTransition } from "@/server/contract/types";
import { StateTimeline } from "./StateTimeline";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const ago = (s: number) => NOW - s * 1000;
const running: UnitTransition = {
  unit: "vllm.service",
  atUsec: ago(200) * 1000,
  from: { activeState: "activating", subState: "start" },
  to: { activeState: "active", subState: "running" },
  result: "success",
  mainPid: 1,
  controlPid: 0,
  nRestarts: 0,
  inRestartCycle: false,
};
const rt = (secAgo: number, to: ReadinessTransition["to"], from: ReadinessTransition["to"] | null): ReadinessTransition => ({
  unit: "vllm.service",
  atMs: ago(secAgo),
  from,
  to,
  engine: "vllm",
  progress: null,
  reason: null,
});
const history = [
  rt(200, { state: "loading", stage: "loading weights" }, { state: "unknown", stage: null }),
  rt(120, { state: "loading", stage: "capturing CUDA graphs" }, { state: "loading", stage: "loading weights" }),
  rt(100, { state: "serving", stage: null }, { state: "loading", stage: "capturing CUDA graphs" }),
];

function render(extra: Partial<Parameters<typeof StateTimeline>[0]> = {}) {
  return renderToString(
    <StateTimeline
      transitions={[running]}
      range="15m"
      onRangeChange={() => {}}
      nowMs={NOW}
      unitName="vllm.service"
      timeZone="UTC"
      initialWidth={800}
      {...extra}
    />,
  );
}

describe("StateTimeline: the readiness lane, operations and faults", () => {
  it("draws no readiness lane for a unit without an engine: the frame is as before", () => {
    const html = render();
    expect(html).not.toContain("Readiness in view");
    expect(html).toContain('height="86"');
  });

  it("draws the readiness lane under the state lane: a focusable item per stage, serving in its own fill, a hidden table", () => {
    const html = render({ readiness: history, currentReadiness: readiness("serving", { sinceMs: ago(100) }) });
    expect(html).toContain('aria-label="Readiness in view"');
    expect(html.match(/data-ready="\d+"/g) ?? []).toHaveLength(4);
    expect(html).toContain('aria-label="loading weights from 11:56:40 to 11:58:00, 1 min 20 s"');
    expect(html).toContain('aria-label="serving from 11:58:20 to now, so far 1 min 40 s"');
    expect(html).toContain("fill:var(--gd-ready-serving)");
    expect(html.match(/tabindex="0" data-ready/g) ?? []).toHaveLength(1);
    // taller by the lane; the lanes' names in the gutter
    expect(html).toContain('height="118"');
    expect(html).toMatch(/>engine<\/text>/);
    expect(html).toContain("<caption>Readiness of vllm.service&#x27;s engine in view</caption>");
    expect(html).toContain("<td>capturing CUDA graphs</td><td>11:58:00</td><td>11:58:20</td><td>20 s</td>");
    expect(html).toMatch(/Engine now serving for 1 min 40 s\./);
    expect(html).toContain("engine serving");
  });

  it("a recognised engine gets its lane before any history, from its live readiness", () => {
    const html = render({ currentReadiness: readiness("loading", { stage: "loading weights", sinceMs: ago(30) }) });
    expect(html.match(/data-ready="\d+"/g) ?? []).toHaveLength(1);
    expect(html).toContain('aria-label="loading weights from 11:59:30 to now, so far 30 s"');
  });

  it("shows GPU-aware restarts as spans and faults as markers, each in its own list and table", () => {
    const op = operation("started", {
      createdAtMs: ago(300),
      steps: [
        { step: "waiting-for-gpus", atMs: ago(300), heldMiB: 600_000, pids: [], message: "" },
        { step: "starting", atMs: ago(260), heldMiB: 0, pids: [], message: "" },
        { step: "started", atMs: ago(250), heldMiB: 0, pids: [], message: "Started." },
      ],
    });
    const html = render({ operations: [op], faults: [fault("x1", { atMs: ago(60) })] });
    expect(html).toContain('aria-label="GPU-aware restarts in view"');
    expect(html).toContain(
      'aria-label="restart when its GPUs are free by ada from 11:55:00 to 11:55:50 (50 s): waiting for its GPUs 40 s, starting 10 s, started"',
    );
    expect(html).toContain('aria-label="GPU faults in view"');
    expect(html).toContain('aria-label="Xid 79 at 11:59:00 on GPU 0: GPU has fallen off the bus, reset required, PID 4321 (python3)"');
    expect(html).toContain("<caption>GPU faults (NVIDIA Xid) in view</caption>");
    expect(html).toContain("restart when its GPUs are free (steps)");
    expect(html).toContain("GPU fault (Xid)");
  });
});
