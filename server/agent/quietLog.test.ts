import { describe, expect, it } from "vitest";
import { quietLog } from "./quietLog";

describe("quietLog", () => {
  it("logs the first failure, counts repeats, reminds once per period, and reports recovery", () => {
    const lines: string[] = [];
    let t = 0;
    const q = quietLog((m) => lines.push(m), { everyMs: 60_000, now: () => t });
    q.repeat("ENOENT", "bus: ENOENT; retrying in 100 ms");
    for (let i = 0; i < 12; i++) {
      t += 5_000;
      q.repeat("ENOENT", "bus: ENOENT; retrying in 5000 ms");
    }
    expect(lines).toEqual(["bus: ENOENT; retrying in 100 ms", "bus: ENOENT; retrying in 5000 ms (11 repeats not logged)"]);
    q.repeat("ECONNREFUSED", "bus: ECONNREFUSED; retrying in 5000 ms");
    expect(lines.at(-1)).toBe("bus: ECONNREFUSED; retrying in 5000 ms");
    t += 1_000;
    q.repeat("ECONNREFUSED", "again");
    q.recovered("bus: connected");
    expect(lines.at(-1)).toBe("bus: connected (1 repeat not logged)");
    q.recovered("bus: connected");
    expect(lines.filter((l) => l.startsWith("bus: connected"))).toHaveLength(1);
  });

  it("with everyMs 0 logs every line", () => {
    const lines: string[] = [];
    const q = quietLog((m) => lines.push(m), { everyMs: 0 });
    q.repeat("k", "a");
    q.repeat("k", "a");
    expect(lines).toEqual(["a", "a"]);
  });
});
