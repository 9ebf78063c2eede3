import { describe, expect, it } from "vitest";
import { hostUnit, summary } from "@/components/live/fixtures";
import { gpusLinkTarget, unitLinkTarget } from "./oldLinks";

const KIMI = "vllm-kimi-k25.service";
const units = [hostUnit("gpu-a", KIMI), hostUnit("gpu-a", "embed.service"), hostUnit("gpu-b", "embed.service")];
const hosts = [summary("gpu-a", { unitCounts: { active: 2 } }), summary("gpu-b", { unitCounts: { active: 1 } })];

describe("unitLinkTarget", () => {
  it("goes to the one host that has the unit", () => {
    expect(unitLinkTarget(KIMI, units, hosts, true)).toEqual({ kind: "go", href: `/hosts/gpu-a/units/${KIMI}` });
  });

  it("encodes the unit name in the link", () => {
    const at = [hostUnit("gpu-a", "vllm@kimi.service")];
    expect(unitLinkTarget("vllm@kimi.service", at, hosts, false)).toEqual({ kind: "go", href: "/hosts/gpu-a/units/vllm%40kimi.service" });
  });

  it("lets the person choose when several hosts have it", () => {
    expect(unitLinkTarget("embed.service", units, hosts, true)).toEqual({ kind: "choose", hosts: ["gpu-a", "gpu-b"] });
  });

  it("waits while a host the panel has not reached yet may have it too, then decides", () => {
    const withNew = [...hosts, summary("gpu-c", { state: "connecting" })];
    expect(unitLinkTarget(KIMI, units, withNew, true)).toEqual({ kind: "waiting", connecting: ["gpu-c"] });
    expect(unitLinkTarget(KIMI, units, withNew, false)).toEqual({ kind: "go", href: `/hosts/gpu-a/units/${KIMI}` });
  });

  it("says when no host has it, naming the hosts nobody knows the units of", () => {
    const withDown = [...hosts, summary("gpu-c", { state: "down" }), summary("gpu-d", { state: "down", unitCounts: { failed: 1 } })];
    expect(unitLinkTarget("nope.service", units, withDown, true)).toEqual({ kind: "none", unknown: ["gpu-c"] });
  });
});

describe("gpusLinkTarget", () => {
  it("goes to the only host, lets the person choose among several, or says there is none", () => {
    expect(gpusLinkTarget([summary("gpu-a")])).toEqual({ kind: "go", href: "/hosts/gpu-a/gpus" });
    expect(gpusLinkTarget(hosts)).toEqual({ kind: "choose", hosts: ["gpu-a", "gpu-b"] });
    expect(gpusLinkTarget([])).toEqual({ kind: "none", unknown: [] });
  });
});
