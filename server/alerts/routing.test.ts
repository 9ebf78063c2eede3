import { describe, expect, it } from "vitest";
import { escalationChannelIds, escalationNames, regularChannelIds } from "./routing";
import { parseAlertRules } from "./rules";

const channels = [
  { id: "c1", name: "slack", enabled: true },
  { id: "c2", name: "pager", enabled: true },
  { id: "c3", name: "old", enabled: false },
  { id: "c4", name: "manager", enabled: true },
];

describe("alert routing", () => {
  const rules = parseAlertRules(
    JSON.stringify({
      "unit-failed": [{ match: ["gpu-a:vllm-*"], escalateAfter: "10m", escalateTo: ["pager"] }],
      "agent-down": { escalateAfter: "5m", escalateTo: ["manager", "missing"] },
    }),
  );

  it("names every channel some rule escalates to", () => {
    expect([...escalationNames(rules)].sort()).toEqual(["manager", "missing", "pager"]);
  });

  it("sends an alert's start to the enabled channels that are no escalation channel", () => {
    expect(regularChannelIds(channels, rules)).toEqual(["c1"]);
    expect(regularChannelIds(channels, parseAlertRules(undefined))).toEqual(["c1", "c2", "c4"]);
  });

  it("escalates an alert to its own rule's channels (that exist and are enabled)", () => {
    expect(escalationChannelIds(channels, rules, { rule: "unit-failed", host: "gpu-a", unit: "vllm-kimi.service" })).toEqual(["c2"]);
    // the entry's match does not cover it: the default entry, which escalates nowhere
    expect(escalationChannelIds(channels, rules, { rule: "unit-failed", host: "gpu-b", unit: "vllm-kimi.service" })).toEqual([]);
    expect(escalationChannelIds(channels, rules, { rule: "agent-down", host: "gpu-b", unit: null })).toEqual(["c4"]);
  });
});
