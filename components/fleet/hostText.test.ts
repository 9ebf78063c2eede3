import { describe, expect, it } from "vitest";
import { agentText, exitedText, gpuTotalsText, hostSourceText, hostStateText, unitCountList, unitTotal } from "./hostText";

describe("hostStateText", () => {
  const now = new Date(2025, 4, 1, 14, 5, 32).getTime();
  it("says since when a host is down, and for how long", () => {
    const since = new Date(2025, 4, 1, 14, 3, 27).getTime();
    expect(hostStateText({ state: "down", sinceMs: since }, now)).toBe("down since 14:03:27 (2 min 05 s)");
  });
  it("says how long a host has been connected or connecting", () => {
    expect(hostStateText({ state: "connected", sinceMs: now - 65_000 }, now)).toBe("connected for 1 min 05 s");
    expect(hostStateText({ state: "connecting", sinceMs: now - 3_000 }, now)).toBe("connecting for 3.0 s");
  });
});

describe("unit counts", () => {
  it("lists trouble first and leaves zeros out", () => {
    expect(unitCountList({ active: 3, inactive: 0, failed: 1, activating: 2, weird: 1 })).toEqual([
      ["failed", 1],
      ["activating", 2],
      ["active", 3],
      ["weird", 1],
    ]);
    expect(unitTotal({ active: 3, failed: 1 })).toBe(4);
  });
});

describe("GPU totals", () => {
  it("writes GPUs and memory, never a number that was not reported", () => {
    expect(gpuTotalsText({ gpus: 8, usedMiB: 600 * 1024, totalMiB: 640 * 1024, exitedMiB: 0, telemetry: "ok" })).toBe("8 GPUs · 600 / 640 GiB");
    expect(gpuTotalsText({ gpus: 1, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry: "ok" })).toBe("1 GPU · memory not reported");
    expect(gpuTotalsText({ gpus: 0, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry: "ok" })).toBe("no GPUs reported");
    expect(gpuTotalsText({ gpus: 0, usedMiB: null, totalMiB: null, exitedMiB: 0, telemetry: "unreachable" })).toBe("GPU telemetry unreachable");
  });
  it("says what exited processes still hold", () => {
    expect(exitedText({ gpus: 8, usedMiB: 1, totalMiB: 2, exitedMiB: 12.5 * 1024, telemetry: "ok" })).toBe("12.5 GiB held by exited processes");
    expect(exitedText({ gpus: 8, usedMiB: 1, totalMiB: 2, exitedMiB: 0, telemetry: "ok" })).toBeNull();
  });
});

describe("agentText and hostSourceText", () => {
  it("names the agent's version and machine", () => {
    expect(agentText({ name: "gpu-a", agentVersion: "0.1.0", hostname: "gpu-a", simulated: true })).toBe("agent 0.1.0 (simulated)");
    expect(agentText({ name: "gpu-a", agentVersion: "0.1.0", hostname: "node-7", simulated: false })).toBe("agent 0.1.0 on node-7");
    expect(agentText({ name: "gpu-a", agentVersion: null, hostname: null, simulated: false })).toBeNull();
  });
  it("says where a host is configured", () => {
    expect(hostSourceText("file")).toMatch(/GPUDECK_AGENTS_FILE/);
    expect(hostSourceText("env")).toMatch(/GPUDECK_AGENT_URL/);
    expect(hostSourceText("panel")).toBe("added on this page");
  });
});
