import { describe, expect, it } from "vitest";
import { DRAG_THRESHOLD_PX, NO_GESTURE, reduceGesture, type GestureState, type PointerInput } from "./gesture";
import { timeScale } from "./layout";

const NOW = Date.UTC(2025, 0, 12, 12, 0);
const MIN = 60_000;
const win = { fromMs: NOW - 30 * MIN, toMs: NOW };
// 800 px box, gutter 44 + 12: 744 px of time, 30 min of it
const scale = timeScale(win.fromMs, win.toMs, 800, { left: 44, right: 12 });
const msPerPx = (30 * MIN) / 744;

/** Feeds inputs in order; returns the last step and every view action on the way. */
function run(inputs: PointerInput[], state: GestureState = NO_GESTURE) {
  const steps = [];
  for (const input of inputs) {
    const step = reduceGesture(state, input, scale);
    state = step.state;
    steps.push(step);
  }
  return { state, steps, last: steps.at(-1)! };
}
const down = (x: number, extra: Partial<Extract<PointerInput, { type: "down" }>> = {}): PointerInput => ({
  type: "down",
  id: 1,
  x,
  pointerType: "mouse",
  button: 0,
  win,
  ...extra,
});
const move = (x: number, id = 1, pointerType = "mouse"): PointerInput => ({ type: "move", id, x, pointerType });
const up = (id = 1): PointerInput => ({ type: "up", id, win });

describe("drag", () => {
  it("pans by the time under the dragged pixels, measured from where the drag began", () => {
    const { steps } = run([down(400), move(500), move(450)]);
    expect(steps[1]!.view).toEqual({ type: "set", fromMs: win.fromMs - 100 * msPerPx, toMs: win.toMs - 100 * msPerPx });
    expect(steps[2]!.view).toEqual({ type: "set", fromMs: win.fromMs - 50 * msPerPx, toMs: win.toMs - 50 * msPerPx });
  });

  it("dragging left moves later in time", () => {
    const { last } = run([down(400), move(300)]);
    expect(last.view).toEqual({ type: "set", fromMs: win.fromMs + 100 * msPerPx, toMs: win.toMs + 100 * msPerPx });
  });

  it("is a click until the pointer moved the threshold, then captures once", () => {
    const { steps } = run([down(400), move(400 + DRAG_THRESHOLD_PX - 1), move(400 - DRAG_THRESHOLD_PX), move(380)]);
    expect(steps[1]).not.toHaveProperty("view");
    expect(steps[1]!.capture).toBeFalsy();
    expect(steps[2]!.view).toBeDefined();
    expect(steps[2]!.capture).toBe(true);
    expect(steps[3]!.capture).toBe(false);
  });

  it("ignores mouse buttons other than the primary; touch and pen have none", () => {
    expect(run([down(400, { button: 2 }), move(500)]).last.view).toBeUndefined();
    expect(run([down(400, { pointerType: "touch", button: -1 }), move(500, 1, "touch")]).last.view).toBeDefined();
  });

  it("ends when the pointer goes up: later moves only hover", () => {
    const { state, last } = run([down(400), move(500), up(), move(600)]);
    expect(state).toEqual({ pointers: new Map(), gesture: null });
    expect(last.view).toBeUndefined();
    expect(last.hoverMs).toBeCloseTo(scale.ms(600), 6);
  });
});

describe("hover", () => {
  it("reports the time under a mouse over the plot, not over the gutters, not for touch", () => {
    expect(run([move(44)]).last.hoverMs).toBe(win.fromMs);
    expect(run([move(788)]).last.hoverMs).toBe(win.toMs);
    expect(run([move(43)]).last.hoverMs).toBeUndefined();
    expect(run([move(789)]).last.hoverMs).toBeUndefined();
    expect(run([move(400, 1, "touch")]).last.hoverMs).toBeUndefined();
  });
});

describe("pinch", () => {
  const touchDown = (id: number, x: number): PointerInput => ({ type: "down", id, x, pointerType: "touch", button: -1, win });

  it("zooms by the ratio of finger distances, keeping the time under the midpoint", () => {
    const { last } = run([touchDown(1, 200), touchDown(2, 400), move(600, 2, "touch")]);
    const view = last.view as { type: "set"; fromMs: number; toMs: number };
    expect(view.toMs - view.fromMs).toBeCloseTo(15 * MIN, 6); // twice as far apart: half the span
    const anchorMs = scale.ms(300); // the first midpoint …
    expect(view.fromMs + ((400 - 44) / 744) * (view.toMs - view.fromMs)).toBeCloseTo(anchorMs, 6); // … is under the new one
  });

  it("fingers that start too close together pan instead of zooming", () => {
    const { last } = run([touchDown(1, 300), touchDown(2, 305), move(405, 2, "touch")]);
    expect(last.view).toEqual({ type: "set", fromMs: win.fromMs - 105 * msPerPx, toMs: win.toMs - 105 * msPerPx });
  });

  it("lifting one finger continues as a drag of the other, from where it is", () => {
    const { state, last } = run([touchDown(1, 200), touchDown(2, 400), up(2), move(250, 1, "touch")]);
    expect([...state.pointers.keys()]).toEqual([1]);
    expect(last.view).toEqual({ type: "set", fromMs: win.fromMs - 50 * msPerPx, toMs: win.toMs - 50 * msPerPx });
  });
});
