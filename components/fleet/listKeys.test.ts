import { describe, expect, it } from "vitest";
import { nextRowIndex } from "./listKeys";

describe("nextRowIndex (keyboard in a virtualized list)", () => {
  it("moves one row with the arrows, to the ends with Home and End, never past them", () => {
    expect(nextRowIndex("ArrowDown", 0, 1000)).toBe(1);
    expect(nextRowIndex("ArrowDown", 999, 1000)).toBe(999);
    expect(nextRowIndex("ArrowUp", 0, 1000)).toBe(0);
    expect(nextRowIndex("ArrowUp", 500, 1000)).toBe(499);
    expect(nextRowIndex("Home", 500, 1000)).toBe(0);
    expect(nextRowIndex("End", 3, 1000)).toBe(999);
  });
  it("leaves other keys (Tab, Enter) to the browser", () => {
    expect(nextRowIndex("Tab", 3, 1000)).toBeNull();
    expect(nextRowIndex("Enter", 3, 1000)).toBeNull();
    expect(nextRowIndex("ArrowDown", 0, 0)).toBeNull();
  });
});
