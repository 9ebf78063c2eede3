// @vitest-environment happy-dom
/**
 * The assembled timeline in a DOM: drag, pinch, wheel, keys, roving focus and tooltips, as a
 * person uses them. The view window is read from onWindowChange, like the GPU chart reads it.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { ComponentProps } from "react";
import type { UnitTransition } from "@/server/contract/types";
import { formatSystemdTimestamp } from "@/server/contract/format";
import { StateTimeline, type ActionMarker } from "./StateTimeline";
import { loadTimelineTip } from "./lazyTip";
import { MIN_SPAN_MS } from "./view";
import { fire, focus, key, mount, mouse, pointer, stubLayout, wheel, type Mounted } from "./domTestKit";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;
/** 800 px box minus the default gutter (44 left, 12 right) */
const PLOT_LEFT = 44;
const PLOT_PX = 744;

const at = (secAgo: number) => (NOW - secAgo * 1000) * 1000; // µs
function tr(secAgo: number, to: [string, string], from: [string, string] | null, extra: Partial<UnitTransition> = {}): UnitTransition {
  return {
    unit: "vllm.service",
    atUsec: at(secAgo),
    from: from && { activeState: from[0], subState: from[1] },
    to: { activeState: to[0], subState: to[1] },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
    ...extra,
  };
}

// inactive (start unknown) → running 50 min → start-pre 20 min → running: 4 segments at 1 h, all wide
const transitions = [
  tr(3000, ["active", "running"], ["inactive", "dead"]),
  tr(1800, ["activating", "start-pre"], ["active", "running"], { controlPid: 213509 }),
  tr(600, ["active", "running"], ["activating", "start-pre"], { mainPid: 4242 }),
];
const markers: ActionMarker[] = [
  { atMs: NOW - 1801_000, user: "alice", action: "restart", reason: "GPU memory leak", jobResult: "done", auditId: 7, href: "/audit?id=7" },
  { atMs: NOW - 300_000, user: "bob", action: "stop", jobResult: "failed" },
];
const gaps = [
  { fromMs: NOW - 50 * MIN, toMs: NOW - 45 * MIN },
  { fromMs: NOW - 20 * MIN, toMs: NOW - 15 * MIN },
];

type Win = { fromMs: number; toMs: number; following: boolean };

let ui: Mounted;
let windows: Win[];
let hovered: (number | null)[];
let ranges: string[];

function props(extra: Partial<ComponentProps<typeof StateTimeline>> = {}): ComponentProps<typeof StateTimeline> {
  return {
    transitions,
    markers,
    unobserved: gaps,
    range: "1h",
    onRangeChange: (r) => ranges.push(r),
    nowMs: NOW,
    onWindowChange: (fromMs, toMs, following) => windows.push({ fromMs, toMs, following }),
    onHoverMs: (ms) => hovered.push(ms),
    unitName: "vllm.service",
    timeZone: "UTC",
    initialWidth: 800,
    ...extra,
  };
}

const win = () => windows.at(-1)!;
const span = () => win().toMs - win().fromMs;
const plot = () => ui.container.querySelector<HTMLElement>('[aria-roledescription="timeline"]')!;
const button = (name: string) => ui.container.querySelector<HTMLButtonElement>(`button[aria-label="${name}"]`)!;
const items = (list: string) => [...ui.container.querySelectorAll<SVGGElement>(`[role="list"][aria-label="${list}"] > [role="listitem"]`)];
const tooltip = () => ui.container.querySelector<HTMLElement>('[role="tooltip"]');
const tabStops = (list: string) => items(list).filter((el) => el.getAttribute("tabindex") === "0");
const click = (el: Element) => fire(el, mouse("click"));

beforeEach(() => {
  windows = [];
  hovered = [];
  ranges = [];
  stubLayout(800);
  ui = mount(<StateTimeline {...props()} />);
});
afterEach(() => {
  ui.unmount();
  vi.restoreAllMocks();
});

describe("view: buttons and range", () => {
  it("starts following now over the whole range and reports it", () => {
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
    expect(button("Zoom out").disabled).toBe(true);
    expect(button("Pan later").disabled).toBe(true);
  });

  it("zooms and pans by the buttons: a quarter window per pan, twice or half per zoom", () => {
    click(button("Zoom in"));
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
    click(button("Pan earlier"));
    expect(win()).toEqual({ fromMs: NOW - 37.5 * MIN, toMs: NOW - 7.5 * MIN, following: false });
    click(button("Pan later"));
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
    click(button("Zoom out"));
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
  });

  it("Live returns to following now over the whole range", () => {
    click(button("Zoom in"));
    click(button("Pan earlier"));
    const live = [...ui.container.querySelectorAll("button")].find((b) => b.textContent === "Live")!;
    expect(live.getAttribute("aria-pressed")).toBe("false");
    click(live);
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
    expect(live.getAttribute("aria-pressed")).toBe("true");
  });

  it("asks the parent for another range, and a new range resets the view", () => {
    click(button("Zoom in"));
    const sixHours = [...ui.container.querySelectorAll('[aria-label="Time range"] button')].find((b) => b.textContent === "6 h")!;
    click(sixHours);
    expect(ranges).toEqual(["6h"]);
    ui.rerender(<StateTimeline {...props({ range: "6h" })} />);
    expect(win()).toEqual({ fromMs: NOW - 6 * HOUR, toMs: NOW, following: true });
  });
});

describe("drag", () => {
  beforeEach(() => click(button("Zoom in"))); // 30 min, following: room to pan earlier

  it("pans the view by the time under the dragged pixels", () => {
    const capture = vi.fn();
    plot().setPointerCapture = capture;
    fire(plot(), pointer("pointerdown", { clientX: 400 }));
    fire(plot(), pointer("pointermove", { clientX: 403 }));
    // under 5 px it is still a click: nothing moves, nothing is captured
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
    expect(capture).not.toHaveBeenCalled();
    fire(plot(), pointer("pointermove", { clientX: 500 }));
    const dragged = (100 * 30 * MIN) / PLOT_PX;
    expect(win().fromMs).toBeCloseTo(NOW - 30 * MIN - dragged, 6);
    expect(win().toMs).toBeCloseTo(NOW - dragged, 6);
    expect(win().following).toBe(false);
    expect(capture).toHaveBeenCalledTimes(1);
    // the offset counts from where the drag began, not from the last move
    fire(plot(), pointer("pointermove", { clientX: 450 }));
    expect(win().toMs).toBeCloseTo(NOW - dragged / 2, 6);
    fire(plot(), pointer("pointerup", { clientX: 450 }));
    // after release, moving the mouse only hovers
    const before = win();
    fire(plot(), pointer("pointermove", { clientX: 600 }));
    expect(win()).toBe(before);
    expect(hovered.at(-1)).toBeCloseTo(before.fromMs + ((600 - PLOT_LEFT) / PLOT_PX) * 30 * MIN, 6);
  });

  it("dragging past now follows now again", () => {
    fire(plot(), pointer("pointerdown", { clientX: 400 }));
    fire(plot(), pointer("pointermove", { clientX: 500 }));
    fire(plot(), pointer("pointerup", { clientX: 500 }));
    expect(win().following).toBe(false);
    fire(plot(), pointer("pointerdown", { clientX: 400 }));
    fire(plot(), pointer("pointermove", { clientX: 100 }));
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
  });

  it("stops at the start of the loaded range", () => {
    fire(plot(), pointer("pointerdown", { clientX: 100 }));
    fire(plot(), pointer("pointermove", { clientX: 900 })); // captured, so beyond the box: 800 px ≈ 32 min
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW - 30 * MIN, following: false });
  });

  it("ignores other mouse buttons", () => {
    fire(plot(), pointer("pointerdown", { clientX: 400, button: 2 }));
    fire(plot(), pointer("pointermove", { clientX: 500 }));
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
  });

  it("a pointer cancelled by the browser ends the drag", () => {
    fire(plot(), pointer("pointerdown", { clientX: 400 }));
    fire(plot(), pointer("pointercancel", { clientX: 400 }));
    const before = win();
    fire(plot(), pointer("pointermove", { clientX: 500 }));
    expect(win()).toBe(before);
  });
});

describe("pinch", () => {
  it("two fingers zoom around their midpoint", () => {
    const touch = (type: "pointerdown" | "pointermove", pointerId: number, clientX: number) =>
      fire(plot(), pointer(type, { pointerId, clientX, pointerType: "touch" }));
    touch("pointerdown", 1, 200);
    touch("pointerdown", 2, 400);
    touch("pointermove", 2, 600); // fingers twice as far apart: half the span
    const anchorMs = NOW - HOUR + ((300 - PLOT_LEFT) / PLOT_PX) * HOUR; // under the first midpoint
    const fromMs = anchorMs - ((400 - PLOT_LEFT) / PLOT_PX) * 30 * MIN; // now under the new midpoint
    expect(win().fromMs).toBeCloseTo(fromMs, 6);
    expect(win().toMs).toBeCloseTo(fromMs + 30 * MIN, 6);
    expect(win().following).toBe(false);
  });
});

describe("wheel", () => {
  /** 30 min ending 3 min before now: not following, room on both sides */
  function detach() {
    click(button("Zoom in"));
    fire(plot(), key("ArrowLeft"));
    expect(win()).toEqual({ fromMs: NOW - 33 * MIN, toMs: NOW - 3 * MIN, following: false });
  }
  const timeAt = (x: number) => win().fromMs + ((x - PLOT_LEFT) / PLOT_PX) * span();

  it("Ctrl+wheel zooms around the pointer: the time under it stays under it", () => {
    detach();
    const underPointer = timeAt(200);
    const e = fire(plot(), wheel({ deltaY: -50, clientX: 200, ctrlKey: true }));
    expect(e.defaultPrevented).toBe(true);
    expect(span()).toBeCloseTo(30 * MIN * Math.exp(-0.5), 3);
    expect(timeAt(200)).toBeCloseTo(underPointer, 3);
    fire(plot(), wheel({ deltaY: 30, clientX: 600, metaKey: true })); // ⌘ on macOS, zooming out
    expect(span()).toBeCloseTo(30 * MIN * Math.exp(-0.2), 3);
  });

  it("while following, zoom keeps the right edge at now", () => {
    fire(plot(), wheel({ deltaY: -50, clientX: 200, ctrlKey: true }));
    expect(win().toMs).toBe(NOW);
    expect(win().following).toBe(true);
    expect(span()).toBeCloseTo(HOUR * Math.exp(-0.5), 3);
  });

  it("respects the narrowest window and the loaded range, and limits each step", () => {
    fire(plot(), wheel({ deltaY: -100_000, clientX: 400, ctrlKey: true }));
    expect(span()).toBeCloseTo(HOUR * Math.exp(-1), 3); // one event zooms by e at most
    for (let i = 0; i < 20; i++) fire(plot(), wheel({ deltaY: -3, deltaMode: 1, clientX: 400, ctrlKey: true })); // lines: 16 px each
    expect(span()).toBe(MIN_SPAN_MS);
    for (let i = 0; i < 20; i++) fire(plot(), wheel({ deltaY: 1, deltaMode: 2, clientX: 400, ctrlKey: true })); // pages
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
  });

  it("a horizontal wheel pans by its pixels", () => {
    click(button("Zoom in"));
    const e = fire(plot(), wheel({ deltaX: -100, deltaY: 10 }));
    expect(e.defaultPrevented).toBe(true);
    const moved = (100 * 30 * MIN) / PLOT_PX;
    expect(win().toMs).toBeCloseTo(NOW - moved, 6);
    expect(win().following).toBe(false);
  });

  it("a plain vertical wheel scrolls the page, not the timeline", () => {
    const before = win();
    const e = fire(plot(), wheel({ deltaY: 100, clientX: 400 }));
    expect(e.defaultPrevented).toBe(false);
    expect(win()).toBe(before);
  });

  it("double-click zooms in", () => {
    fire(plot(), mouse("dblclick", { clientX: 400 }));
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
  });
});

describe("keys on the plot", () => {
  beforeEach(() => focus(plot()));
  const press = (name: string, init: KeyboardEventInit = {}) => fire(plot(), key(name, init));

  it("+ and − (or = and _) zoom by two", () => {
    expect(press("+").defaultPrevented).toBe(true);
    expect(span()).toBe(30 * MIN);
    press("=");
    expect(span()).toBe(15 * MIN);
    press("-");
    expect(span()).toBe(30 * MIN);
    press("_");
    press("_"); // no wider than the range
    expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
  });

  it("←/→ pan a tenth of the window, with Shift a half", () => {
    press("+");
    press("ArrowLeft");
    expect(win()).toEqual({ fromMs: NOW - 33 * MIN, toMs: NOW - 3 * MIN, following: false });
    press("ArrowLeft", { shiftKey: true });
    expect(win()).toEqual({ fromMs: NOW - 48 * MIN, toMs: NOW - 18 * MIN, following: false });
    press("ArrowRight");
    expect(win()).toEqual({ fromMs: NOW - 45 * MIN, toMs: NOW - 15 * MIN, following: false });
    press("ArrowRight", { shiftKey: true });
    press("ArrowRight", { shiftKey: true });
    expect(win()).toEqual({ fromMs: NOW - 30 * MIN, toMs: NOW, following: true });
  });

  it("L and End go live", () => {
    for (const k of ["l", "L", "End"]) {
      press("+");
      press("ArrowLeft");
      expect(win().following).toBe(false);
      press(k);
      expect(win()).toEqual({ fromMs: NOW - HOUR, toMs: NOW, following: true });
    }
  });

  it("leaves other keys alone", () => {
    expect(press("a").defaultPrevented).toBe(false);
    expect(press("Tab").defaultPrevented).toBe(false);
    expect(press("Escape").defaultPrevented).toBe(false); // no tooltip to close
  });
});

describe("roving focus: one tab stop per list, arrows move within it", () => {
  const cases = [
    { list: "States in view", attr: "data-seg", count: 4 },
    { list: "Actions in view", attr: "data-marker", count: 2 },
    { list: "Times no agent was running, in view", attr: "data-gap", count: 2 },
  ];
  const active = () => document.activeElement as Element;

  for (const { list, attr, count } of cases) {
    it(`${list}: ←/→/Home/End move focus, the focused item is the tab stop`, () => {
      expect(items(list)).toHaveLength(count);
      // the latest item is the tab stop
      expect(tabStops(list)).toEqual([items(list)[count - 1]]);
      focus(items(list)[count - 1]!);
      const e = fire(active(), key("ArrowLeft"));
      expect(e.defaultPrevented).toBe(true);
      expect(active().getAttribute(attr)).toBe(String(count - 2));
      expect(tabStops(list)).toEqual([items(list)[count - 2]]);
      fire(active(), key("Home"));
      expect(active().getAttribute(attr)).toBe("0");
      fire(active(), key("ArrowLeft")); // stays at the first
      expect(active().getAttribute(attr)).toBe("0");
      fire(active(), key("ArrowRight"));
      expect(active().getAttribute(attr)).toBe("1");
      fire(active(), key("End")); // the last item, not live mode
      expect(active().getAttribute(attr)).toBe(String(count - 1));
      fire(active(), key("ArrowRight")); // stays at the last
      expect(active().getAttribute(attr)).toBe(String(count - 1));
      expect(tabStops(list)).toEqual([items(list)[count - 1]]);
    });
  }

  it("arrows on an item move focus, not the view; zoom keys still zoom", () => {
    focus(items("States in view")[3]!);
    const before = windows.length;
    fire(active(), key("ArrowLeft"));
    expect(windows.length).toBe(before);
    fire(active(), key("+"));
    expect(span()).toBe(30 * MIN);
  });
});

describe("tooltips", () => {
  // the tooltip's code is fetched on first use (lazyTip.test.tsx covers that); here it is in
  beforeAll(() => loadTimelineTip());
  const segment = (i: number) => items("States in view")[i]!;
  const closeButton = () => ui.container.querySelector('button[aria-label="Close details"]');

  it("focus shows a segment's details with systemd's exact µs timestamps; blur hides them", () => {
    focus(segment(2)); // start-pre, 30 – 10 min ago
    expect(tooltip()?.textContent).toContain("activating (start-pre)");
    expect(tooltip()?.textContent).toContain(`${formatSystemdTimestamp(at(1800), "UTC")} · ${at(1800)} µs`);
    expect(tooltip()?.textContent).toContain(`${formatSystemdTimestamp(at(600), "UTC")} · ${at(600)} µs`);
    expect(tooltip()?.textContent).toContain("control PID 213509");
    expect(closeButton()).toBeNull();
    focus(plot());
    expect(tooltip()).toBeNull();
  });

  it("Enter pins the tooltip, Enter again or Escape closes it", () => {
    focus(segment(2));
    expect(fire(segment(2), key("Enter")).defaultPrevented).toBe(true);
    expect(closeButton()).not.toBeNull();
    fire(segment(2), key("Enter"));
    expect(tooltip()).toBeNull();
    fire(segment(2), key(" "));
    expect(closeButton()).not.toBeNull();
    expect(fire(segment(2), key("Escape")).defaultPrevented).toBe(true);
    expect(tooltip()).toBeNull();
  });

  it("Escape inside the tooltip closes it and returns focus to the plot", () => {
    focus(segment(2));
    fire(segment(2), key("Enter"));
    fire(closeButton()!, key("Escape"));
    expect(tooltip()).toBeNull();
    expect(document.activeElement).toBe(plot());
  });

  it("the × button closes a pinned tooltip", () => {
    click(segment(1));
    click(closeButton()!);
    expect(tooltip()).toBeNull();
  });

  it("hover shows and hides; a pinned tooltip stays until closed or replaced", () => {
    fire(segment(1), mouse("mouseover"));
    expect(tooltip()?.textContent).toContain("active (running)");
    fire(segment(1), mouse("mouseout"));
    expect(tooltip()).toBeNull();
    click(segment(2));
    fire(segment(2), mouse("mouseout"));
    fire(segment(1), mouse("mouseover"));
    expect(tooltip()?.textContent).toContain("activating (start-pre)");
    click(segment(1)); // another click pins that one instead
    expect(tooltip()?.textContent).toContain("active (running)");
    click(segment(1)); // the pinned one again: closed
    expect(tooltip()).toBeNull();
  });

  it("a click on the empty plot closes a pinned tooltip", () => {
    click(segment(2));
    expect(tooltip()).not.toBeNull();
    click(plot());
    expect(tooltip()).toBeNull();
  });

  it("markers and gaps have their own details", () => {
    const marker = items("Actions in view")[0]!;
    focus(marker);
    expect(tooltip()?.textContent).toContain("restart by alice");
    expect(tooltip()?.textContent).toContain("GPU memory leak");
    expect(tooltip()?.querySelector('a[href="/audit?id=7"]')?.textContent).toBe("Audit entry #7 →");
    focus(items("Times no agent was running, in view")[1]!);
    expect(tooltip()?.textContent).toContain("Agent not running");
    expect(tooltip()?.textContent).toContain("5 min");
  });

  it("a tooltip is dropped when its item leaves the view", () => {
    focus(items("Actions in view")[1]!);
    fire(items("Actions in view")[1]!, key("Enter"));
    expect(tooltip()?.textContent).toContain("stop by bob");
    ui.rerender(<StateTimeline {...props({ markers: markers.slice(0, 1) })} />);
    expect(tooltip()).toBeNull();
  });
});
