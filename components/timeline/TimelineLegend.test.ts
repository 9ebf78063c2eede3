import { describe, expect, it } from "vitest";
import type { TimelineSegment } from "./segments";
import { legendStyles } from "./TimelineLegend";

const seg = (activeState: string, subState: string) => ({ activeState, subState }) as TimelineSegment;

describe("legendStyles", () => {
  it("lists each state in view once, in lifecycle order", () => {
    const styles = legendStyles([
      seg("failed", "failed"),
      seg("active", "running"),
      seg("activating", "start-pre"),
      seg("active", "running"),
      seg("inactive", "dead"),
    ]);
    expect(styles.map((s) => s.label)).toEqual(["inactive (dead)", "activating (start-pre)", "active (running)", "failed"]);
  });

  it("is empty with nothing in view", () => {
    expect(legendStyles([])).toEqual([]);
  });
});
