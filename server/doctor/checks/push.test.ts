import { describe, expect, it } from "vitest";
import { loadPushConfig } from "../../push/config";
import { checkPush } from "./push";

describe("doctor: push notifications", () => {
  it("warns when push is configured but the panel is not on https", () => {
    const r = checkPush(loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":["alice"]}' }), "http://panel.example:3000");
    expect(r).toMatchObject({ status: "warn" });
    expect(r.detail).toMatch(/only to HTTPS sites/);
    expect(checkPush(loadPushConfig({ GPUDECK_PUSH_SUBJECT: "mailto:ops@example.com" }), null).status).toBe("warn");
  });

  it("ok on https; nothing to warn about when push is neither configured nor reachable, or turned off", () => {
    expect(checkPush(loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":["alice"]}' }), "https://panel.example").status).toBe("ok");
    expect(checkPush(loadPushConfig({}), "http://127.0.0.1:3000").status).toBe("skip");
    expect(checkPush(loadPushConfig({ GPUDECK_PUSH: "0", GPUDECK_PUSH_GROUPS: '{"a":["b"]}' }), null).status).toBe("skip");
  });
});
