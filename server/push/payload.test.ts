import { describe, expect, it } from "vitest";
import type { AlertWebhookItem, AlertWebhookPayload } from "../contract/alerts";
import { MAX_PLAINTEXT_BYTES, panelPath, pushPayload, urgencyOf } from "./payload";

const item: AlertWebhookItem = {
  alertId: 17,
  host: "gpu-b",
  unit: "vllm-kimi-k25.service",
  rule: "unit-failed",
  state: "firing",
  severity: "critical",
  summary: "vllm-kimi-k25.service failed (exit-code).",
  since: "2030-01-01T03:12:00.000Z",
  resolvedAt: null,
  diagnosis: { headline: "The main process exited with status 1.", severity: "critical", code: "main-exited", nextStep: "Fix it.", evidence: [] },
  diagnosisUnavailable: null,
  link: "https://gpudeck.example/hosts/gpu-b/units/vllm-kimi-k25.service",
};
const one: AlertWebhookPayload = {
  schema: "gpudeck.alert.v1",
  id: "gpudeck-42",
  kind: "alert",
  title: "gpu-b: vllm-kimi-k25.service failed",
  count: 1,
  ...item,
  alerts: [item],
};

describe("pushPayload", () => {
  it("one alert: its headline, host, unit, the unit page's path and its id to acknowledge", () => {
    expect(pushPayload(one)).toEqual({
      schema: "gpudeck.push.v1",
      kind: "alert",
      state: "firing",
      title: "gpu-b: vllm-kimi-k25.service failed",
      body: "The main process exited with status 1.",
      host: "gpu-b",
      unit: "vllm-kimi-k25.service",
      url: "/hosts/gpu-b/units/vllm-kimi-k25.service",
      alertId: 17,
      tag: "gpudeck-alert-17",
      id: "gpudeck-42",
    });
    expect(urgencyOf(one)).toBe("high");
  });

  it("the summary when there is no diagnosis; a resolution replaces the start (same tag) and offers no Acknowledge", () => {
    const resolved = pushPayload({ ...one, diagnosis: null, state: "resolved" });
    expect(resolved).toMatchObject({ body: "Resolved. vllm-kimi-k25.service failed (exit-code).", alertId: null, tag: "gpudeck-alert-17" });
    expect(urgencyOf({ ...one, state: "resolved" })).toBe("low");
  });

  it("a start acknowledged before it was sent: says by whom, offers no Acknowledge, does not wake the phone", () => {
    const acked = { ...one, acknowledgedBy: "alice", acknowledgedAt: "2030-01-01T03:12:04.000Z", ackNote: "rolling back" };
    expect(pushPayload(acked)).toMatchObject({
      body: "The main process exited with status 1. Already acknowledged by alice at 2030-01-01T03:12:04.000Z: rolling back",
      alertId: null,
      tag: "gpudeck-alert-17",
    });
    expect(urgencyOf(acked)).toBe("normal");
  });

  it("a group: no unit, no alert to acknowledge, the host's page", () => {
    const group = pushPayload({ ...one, count: 3, unit: null, diagnosis: null, summary: "a, b, c", link: "https://gpudeck.example/hosts/gpu-b" });
    expect(group).toMatchObject({ unit: null, alertId: null, url: "/hosts/gpu-b", body: "a, b, c", tag: "gpudeck-gpu-b-unit-failed" });
  });

  it("stays under what a push service carries, however long the headline", () => {
    const long = pushPayload({ ...one, diagnosis: { ...item.diagnosis!, headline: "é".repeat(50_000) }, title: "t".repeat(5000) });
    expect(Buffer.byteLength(JSON.stringify(long))).toBeLessThanOrEqual(MAX_PLAINTEXT_BYTES);
    expect(long.title.length).toBeLessThanOrEqual(120);
  });

  it("panelPath keeps the path only", () => {
    expect(panelPath("https://x.example/hosts/a?b=1")).toBe("/hosts/a?b=1");
    expect(panelPath("nonsense")).toBe("/");
  });
});
