import { describe, expect, it } from "vitest";
import type { Diagnosis } from "../contract/diagnosis";
import type { Readiness, ReadinessTransition } from "../contract/readiness";
import { QUOTE_HIDDEN } from "../contract/roleViews";
import { FULL_VIEW, viewAlert, viewDiagnosis, viewReadiness, viewReadinessTransitions, viewUnit } from "./roleViews";
import type { AlertView } from "../contract/alerts";
import { JOURNAL_HIDDEN_LABEL } from "../contract/roleViews";

const VIEWER = { journal: false, admin: false };
const QUOTE = "token hf_abc123 is not valid for /models/secret-finetune";
const failed: Readiness = {
  state: "failed",
  engine: "vllm",
  stage: "loading weights",
  progress: null,
  reason: `ValueError: ${QUOTE}`,
  reasonQuote: QUOTE,
  sinceMs: 1000,
  probe: null,
  models: [],
};

describe("the engine's own words quoted in a reason", () => {
  it("are hidden from a caller without the journal permission, and said to be; the rest of the reason stays", () => {
    const seen = viewReadiness(failed, VIEWER);
    expect(seen.reason).toBe(`ValueError: ${QUOTE_HIDDEN}`);
    expect(JSON.stringify(seen)).not.toContain("hf_abc123");
    expect(viewUnit({ name: "vllm-a.service", readiness: failed }, VIEWER).readiness?.reason).toBe(`ValueError: ${QUOTE_HIDDEN}`);
  });

  it("are kept for a caller who may read journals", () => {
    expect(viewReadiness(failed, FULL_VIEW)).toBe(failed);
  });

  it("in the timeline's readiness transitions too", () => {
    const t: ReadinessTransition = {
      unit: "vllm-a.service",
      atMs: 1000,
      from: { state: "loading", stage: "loading weights" },
      to: { state: "failed", stage: "loading weights" },
      engine: "vllm",
      progress: null,
      reason: failed.reason,
      reasonQuote: QUOTE,
    };
    expect(JSON.stringify(viewReadinessTransitions([t], VIEWER))).not.toContain("hf_abc123");
    expect(viewReadinessTransitions([t], FULL_VIEW)[0]).toBe(t);
  });

  it("in a diagnosis's headline and evidence", () => {
    const d: Diagnosis = {
      severity: "critical",
      code: "engine-failed",
      headline: `Failed 2 min ago: ValueError: ${QUOTE}; then the unit failed.`,
      evidence: [{ label: "Error", value: `"ValueError: ${QUOTE}"`, source: "gpudeck" }],
      nextStep: { text: "Fix the model path, then start it." },
      journalQuotes: [QUOTE],
    };
    const seen = viewDiagnosis(d, VIEWER);
    expect(seen.headline).toBe(`Failed 2 min ago: ValueError: ${QUOTE_HIDDEN}; then the unit failed.`);
    expect(JSON.stringify(seen)).not.toContain("hf_abc123");
    expect(viewDiagnosis(d, FULL_VIEW)).toBe(d);
  });

  it("in an alert's diagnosis on the Alerts page, whose log lines are hidden as well", () => {
    const alert = {
      id: 7,
      rule: "unit-failed",
      host: "gpu-a",
      unit: "vllm-a.service",
      severity: "critical",
      summary: "failed (exit-code)",
      sinceMs: 1000,
      openedAtMs: 1000,
      resolvedAtMs: null,
      diagnosisUnavailable: null,
      silenced: false,
      diagnosis: {
        headline: `Failed: ValueError: ${QUOTE}; then the unit failed.`,
        severity: "critical",
        code: "engine-failed",
        nextStep: "Fix the model path, then start it.",
        evidence: [
          { label: "Log 03:11:00", value: `ERROR ValueError: ${QUOTE}`, source: "journal" },
          { label: "State", value: "failed (exit-code)", source: "systemd" },
        ],
        journalQuotes: [QUOTE],
      },
    } as AlertView;
    const seen = viewAlert(alert, VIEWER);
    expect(JSON.stringify(seen)).not.toContain("hf_abc123");
    expect(seen.diagnosis!.headline).toBe(`Failed: ValueError: ${QUOTE_HIDDEN}; then the unit failed.`);
    expect(seen.diagnosis!.evidence.map((e) => e.label)).toEqual(["State", JOURNAL_HIDDEN_LABEL]);
    expect(viewAlert(alert, FULL_VIEW)).toBe(alert);
  });

  it("in an alert's next step and kept evidence too; an alert with nothing to hide is the same object", () => {
    const base = {
      id: 8,
      rule: "unit-failed",
      host: "gpu-a",
      unit: "vllm-a.service",
      severity: "critical",
      summary: "failed (exit-code)",
      sinceMs: 1000,
      openedAtMs: 1000,
      resolvedAtMs: null,
      diagnosisUnavailable: null,
      silenced: false,
    };
    const alert = {
      ...base,
      diagnosis: {
        headline: "Failed.",
        severity: "critical",
        code: "engine-failed",
        nextStep: `Fix it (${QUOTE}).`,
        evidence: [{ label: "Reason", value: `said ${QUOTE}`, source: "gpudeck" }],
        journalQuotes: [QUOTE],
      },
    } as AlertView;
    expect(viewAlert(alert, VIEWER).diagnosis).toEqual({
      headline: "Failed.",
      severity: "critical",
      code: "engine-failed",
      nextStep: `Fix it (${QUOTE_HIDDEN}).`,
      evidence: [{ label: "Reason", value: `said ${QUOTE_HIDDEN}`, source: "gpudeck" }],
      journalQuotes: [],
    });
    const logOnly = {
      ...base,
      diagnosis: {
        headline: "Failed.",
        severity: "critical",
        code: "engine-failed",
        nextStep: null,
        evidence: [{ label: "Log", value: "ERROR x", source: "journal" }],
      },
    } as AlertView;
    const seen = viewAlert(logOnly, VIEWER).diagnosis!;
    expect(seen.nextStep).toBeNull();
    expect(seen.journalQuotes).toEqual([]);
    expect(seen.evidence).toEqual([{ label: JOURNAL_HIDDEN_LABEL, value: expect.stringContaining("hidden"), source: "gpudeck" }]);
    const clean = { ...base, diagnosis: { ...logOnly.diagnosis!, evidence: [{ label: "State", value: "failed", source: "systemd" }] } } as AlertView;
    expect(viewAlert(clean, VIEWER)).toBe(clean);
  });
});
