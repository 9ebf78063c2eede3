import { describe, expect, it } from "vitest";
import { DEFAULT_PUSH_SUBJECT, endpointProblem, loadPushConfig, PushConfigError } from "./config";

describe("push endpoints", () => {
  it("https only; http on 127.0.0.1 only with GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK", () => {
    expect(endpointProblem("https://fcm.googleapis.com/fcm/send/abc", false)).toBeNull();
    expect(endpointProblem("http://127.0.0.1:9000/push/a", true)).toBeNull();
    expect(endpointProblem("http://127.0.0.1:9000/push/a", false)).toMatch(/GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK=1/);
    expect(endpointProblem("http://localhost:9000/push/a", true)).toMatch(/must be https/);
    expect(endpointProblem("http://10.0.0.1/push", true)).toMatch(/must be https/);
    expect(endpointProblem("ftp://x/y", true)).toMatch(/must be https/);
    expect(endpointProblem("https://u:p@push.example/x", false)).toMatch(/user or password/);
    expect(endpointProblem("not a url", false)).toMatch(/not a URL/);
  });
});

describe("loadPushConfig", () => {
  it("defaults: on, mailto:gpudeck@localhost, no groups, no plain http", () => {
    expect(loadPushConfig({})).toMatchObject({ enabled: true, subject: DEFAULT_PUSH_SUBJECT, groups: {}, allowHttpLoopback: false });
    expect(loadPushConfig({ GPUDECK_PUSH: "0" }).enabled).toBe(false);
  });

  it("groups of usernames and roles", () => {
    expect(loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":["alice","role:admin"]}' }).groups).toEqual({ oncall: ["alice", "role:admin"] });
  });

  it("says what is wrong", () => {
    expect(() => loadPushConfig({ GPUDECK_PUSH_SUBJECT: "http://x" })).toThrow(/GPUDECK_PUSH_SUBJECT must be a mailto: or https: URL/);
    expect(() => loadPushConfig({ GPUDECK_PUSH_SUBJECT: "mailto:nobody" })).toThrow(/needs an address/);
    expect(() => loadPushConfig({ GPUDECK_PUSH_GROUPS: "{" })).toThrow(/not JSON/);
    expect(() => loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"On Call":["a"]}' })).toThrow(PushConfigError);
    expect(() => loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":[]}' })).toThrow(/at least one member/);
    expect(() => loadPushConfig({ GPUDECK_PUSH_GROUPS: '{"oncall":["role:root"]}' })).toThrow(/role:viewer/);
    expect(() => loadPushConfig({ GPUDECK_PUSH: "yes" })).toThrow(/GPUDECK_PUSH must be 0 or 1/);
  });
});
