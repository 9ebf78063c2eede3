import { describe, expect, it } from "vitest";
import { readiness } from "@/components/live/eventFixtures";
import { hostUnit, summary } from "@/components/live/fixtures";
import type { HostUnit } from "@/server/contract/fleet";
import type { CrashLoopMarker } from "@/server/contract/faults";
import { fleetView, isFiltering, unitDoingList } from "./fleetView";
import { STUCK_AFTER_MS } from "./unitOrder";

const NOW = 10_000_000;
const ALL = { q: "", state: "all", host: "" } as const;
const serving = (host: string, name: string) => hostUnit(host, name, "active", "running", { readiness: readiness("serving", { sinceMs: NOW - 60_000 }) });
const loop: CrashLoopMarker = { restarts: 6, windowMs: 600_000, rule: "5/10m", firstAtUsec: 1, lastAtUsec: 2, startLimitStops: false };

/** 50 hosts of 20 serving units each, as `GPUDECK_DEMO_HOSTS=50` plays them when all is well */
function fleet(n = 50, perHost = 20): { hosts: ReturnType<typeof summary>[]; units: HostUnit[] } {
  const hosts = Array.from({ length: n }, (_, i) => summary(`gpu-${String(i + 1).padStart(2, "0")}`));
  const units = hosts.flatMap((h) => Array.from({ length: perHost }, (_, j) => serving(h.name, `svc-${j}.service`)));
  return { hosts, units };
}

describe("fleetView", () => {
  it("folds every healthy host to one line, and nothing needs attention", () => {
    const { hosts, units } = fleet();
    const v = fleetView(hosts, units, ALL, NOW);
    expect(v.filtered).toBe(false);
    expect(v.attentionUnits).toEqual([]);
    expect(v.attentionHosts).toEqual([]);
    expect(v.hosts).toHaveLength(50);
    expect(v.hosts.every((h) => h.healthy && h.folded)).toBe(true);
    expect(v.hosts[16]!.line).toBe("gpu-17 · 20 serving");
    expect(v.hosts[16]!.units).toHaveLength(20);
  });

  it("a panel's only host is never folded: it is the whole page", () => {
    const { hosts, units } = fleet(1, 3);
    const [only] = fleetView(hosts, units, ALL, NOW).hosts;
    expect(only).toMatchObject({ healthy: true, folded: false });
  });

  it("lists failed, looping, stuck and not-serving units first, whichever host, and opens their hosts ahead of the healthy ones", () => {
    const { hosts, units } = fleet(50, 3);
    units.push(
      hostUnit("gpu-40", "broken.service", "failed", "failed"),
      hostUnit("gpu-07", "looping.service", "activating", "auto-restart", { stateChangeUsec: (NOW - 1000) * 1000 }),
      // up between two crashes, but the agent reports a crash loop
      hostUnit("gpu-33", "flapping.service", "active", "running", { crashLoop: loop }),
      hostUnit("gpu-21", "mute.service", "active", "running", { readiness: readiness("not-serving", { sinceMs: NOW - STUCK_AFTER_MS - 1 }) }),
      // loading for a minute: not yet anyone's problem, but its host is not folded either
      hostUnit("gpu-12", "loading.service", "active", "running", { readiness: readiness("loading", { sinceMs: NOW - 60_000 }) }),
    );
    const v = fleetView(hosts, units, ALL, NOW);
    expect(v.attentionUnits.map((u) => `${u.host}/${u.name}`)).toEqual([
      "gpu-40/broken.service",
      "gpu-07/looping.service",
      "gpu-21/mute.service",
      "gpu-33/flapping.service",
    ]);
    const open = v.hosts.filter((h) => !h.healthy);
    expect(open.map((h) => h.name)).toEqual(["gpu-07", "gpu-12", "gpu-21", "gpu-33", "gpu-40"]);
    expect(v.hosts.slice(0, 5)).toEqual(open);
    expect(open.find((h) => h.name === "gpu-12")!.reasons).toEqual(["1 starting or stopping"]);
    expect(open.find((h) => h.name === "gpu-40")!.reasons).toEqual(["1 unit needs attention"]);
    // a host's own units: the failed one first
    expect(open.find((h) => h.name === "gpu-40")!.units[0]!.name).toBe("broken.service");
    expect(open.find((h) => h.name === "gpu-40")!.line).toBe("gpu-40 · 1 failed · 3 serving");
  });

  it("names hosts that are down or whose exited processes hold GPU memory, down hosts first among the open ones", () => {
    const { hosts, units } = fleet(4, 2);
    hosts[2] = summary("gpu-03", { state: "down" });
    hosts[1] = summary("gpu-02", { gpuTotals: { gpus: 8, usedMiB: 600_000, totalMiB: 640_000, exitedMiB: 12_800, telemetry: "ok" } });
    hosts[3] = summary("gpu-04", { state: "connecting" });
    const v = fleetView(hosts, units, ALL, NOW);
    expect(v.attentionHosts).toEqual([
      { name: "gpu-02", what: "12.5 GiB held by exited processes" },
      { name: "gpu-03", what: "down" },
    ]);
    expect(v.hosts.map((h) => [h.name, h.healthy])).toEqual([
      ["gpu-03", false],
      ["gpu-04", false],
      ["gpu-02", false],
      ["gpu-01", true],
    ]);
    expect(v.hosts[0]!.reasons).toEqual(["down"]);
    expect(v.hosts[2]!.reasons).toEqual(["12.5 GiB held by exited processes"]);
  });

  it("with a filter set, is the flat list of the matching units, failed first", () => {
    const { hosts, units } = fleet(3, 2);
    units.push(hostUnit("gpu-02", "svc-9.service", "failed", "failed"));
    expect(isFiltering(ALL)).toBe(false);
    const v = fleetView(hosts, units, { q: "svc-", state: "all", host: "" }, NOW);
    expect(v.filtered).toBe(true);
    expect(v.hosts).toEqual([]);
    expect(v.matching).toHaveLength(7);
    expect(v.matching[0]!.name).toBe("svc-9.service");
    expect(fleetView(hosts, units, { q: "", state: "failed", host: "" }, NOW).matching.map((u) => u.name)).toEqual(["svc-9.service"]);
    expect(fleetView(hosts, units, { q: "", state: "all", host: "gpu-03" }, NOW).matching.map((u) => u.host)).toEqual(["gpu-03", "gpu-03"]);
  });

  it("says what the units of a folded host do", () => {
    const list = [
      serving("h", "a"),
      serving("h", "b"),
      hostUnit("h", "c", "inactive", "dead"),
      hostUnit("h", "d", "active", "running"),
      hostUnit("h", "e", "activating", "start", { stateChangeUsec: (NOW - 1000) * 1000 }),
    ];
    expect(unitDoingList(list, NOW)).toEqual(["1 starting", "2 serving", "1 running", "1 inactive"]);
    expect(fleetView([summary("idle")], [], ALL, NOW).hosts[0]!.line).toBe("idle · no units");
  });
});
