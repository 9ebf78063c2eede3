/** Escalation in the rules: `escalateAfter` (a duration: 20s, 10m, 1h) and `escalateTo` (channel names), per pattern like the rest. */
import { describe, expect, it } from "vitest";
import { AlertRulesError, parseAlertRules, parseDuration, ruleSetting } from "./rules";

describe("escalation settings", () => {
  it("durations: seconds, minutes, hours; nothing else", () => {
    expect(parseDuration("20s")).toBe(20_000);
    expect(parseDuration("10m")).toBe(600_000);
    expect(parseDuration("1h")).toBe(3_600_000);
    for (const bad of ["10", "10 m", "1d", "0m", "-1m", "1.5h", "m"]) expect(parseDuration(bad)).toBeNull();
  });

  it("per pattern; the first match wins; an entry without escalation never escalates", () => {
    const t = parseAlertRules(
      JSON.stringify({
        "unit-failed": [{ match: ["gpu-a:vllm-*"], escalateAfter: "10m", escalateTo: ["pager", "ml-leads"] }, { afterSeconds: 0 }],
        "crash-loop": { escalateAfter: "1h", escalateTo: ["pager"] },
      }),
    );
    expect(ruleSetting(t, "unit-failed", "gpu-a", "vllm-x.service")).toEqual({ afterMs: 0, escalateAfterMs: 600_000, escalateTo: ["pager", "ml-leads"] });
    expect(ruleSetting(t, "unit-failed", "gpu-b", "vllm-x.service")).toEqual({ afterMs: 0, escalateAfterMs: null, escalateTo: [] });
    expect(ruleSetting(t, "crash-loop", "gpu-b", "x.service")).toMatchObject({ escalateAfterMs: 3_600_000, escalateTo: ["pager"] });
    expect(ruleSetting(t, "agent-down", "gpu-b", "")).toMatchObject({ escalateAfterMs: null });
  });

  it("mistakes are refused with the rule and what is wrong", () => {
    expect(() => parseAlertRules('{"unit-failed": {"escalateAfter": "10 minutes", "escalateTo": ["pager"]}}')).toThrow(
      /unit-failed.*escalateAfter must be a duration such as "20s", "10m" or "1h"/,
    );
    expect(() => parseAlertRules('{"unit-failed": {"escalateAfter": "10m"}}')).toThrow(/give escalateAfter and escalateTo together/);
    expect(() => parseAlertRules('{"unit-failed": {"escalateAfter": "10m", "escalateTo": []}}')).toThrow(AlertRulesError);
  });
});
