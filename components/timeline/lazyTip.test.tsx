// @vitest-environment happy-dom
/**
 * The timeline's tooltip code is not in the page's first download (./lazyTip.ts): a tip opened
 * before it arrived shows as soon as it does, and pointing at the timeline fetches it ahead.
 * Its own file: the module's "loaded" state is per test file.
 */
import { act } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UnitTransition } from "@/server/contract/types";
import { focus, mount, stubLayout, type Mounted } from "./domTestKit";
import { StateTimeline } from "./StateTimeline";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const transitions: UnitTransition[] = [
  {
    unit: "vllm.service",
    atUsec: (NOW - 1800_000) * 1000,
    from: { activeState: "inactive", subState: "dead" },
    to: { activeState: "activating", subState: "start-pre" },
    result: "success",
    mainPid: 0,
    controlPid: 213509,
    nRestarts: 0,
    inRestartCycle: false,
  },
];

let ui: Mounted | undefined;
afterEach(() => {
  ui?.unmount();
  vi.restoreAllMocks();
});

const tooltip = () => ui!.container.querySelector<HTMLElement>('[role="tooltip"]');

describe("the timeline's tooltip, loaded on first use", () => {
  it("a tip opened before its code is here shows once it arrives", async () => {
    stubLayout(800);
    ui = mount(
      <StateTimeline transitions={transitions} range="1h" onRangeChange={() => {}} nowMs={NOW} unitName="vllm.service" timeZone="UTC" initialWidth={800} />,
    );
    const segment = [...ui.container.querySelectorAll('[role="list"][aria-label="States in view"] > [role="listitem"]')].at(-1)!;
    focus(segment);
    expect(tooltip()).toBeNull(); // its code is on the way
    await vi.waitFor(async () => {
      await act(async () => {});
      expect(tooltip()?.textContent).toContain("activating (start-pre)");
    });
    expect(tooltip()?.textContent).toContain("control PID 213509");
  });
});
