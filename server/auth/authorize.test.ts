import { describe, expect, it } from "vitest";
import { can, unitPermissions, type Action, type Subject } from "./authorize";

const viewer: Subject = { role: "viewer", unitPatterns: [] };
const operator: Subject = { role: "operator", unitPatterns: ["vllm-team-a-*", "tgi-?.service"] };
const admin: Subject = { role: "admin", unitPatterns: [] };

const OWN = "vllm-team-a-llama.service";
const OTHER = "vllm-team-b-qwen.service";

type Row = [string, Subject, Action, string | null, boolean];
const matrix: Row[] = [
  // viewer: sees, changes nothing
  ["viewer", viewer, "view", null, true],
  ["viewer", viewer, "audit.view", null, false],
  ["viewer", viewer, "users.manage", null, false],
  ["viewer", viewer, "settings.manage", null, false],
  ["viewer", viewer, "start", OWN, false],
  ["viewer", viewer, "stop", OWN, false],
  ["viewer", viewer, "restart", OWN, false],
  ["viewer", viewer, "reset-failed", OWN, false],
  ["viewer", viewer, "kill", OWN, false],
  // operator: own units only, no kill by default
  ["operator", operator, "view", null, true],
  ["operator", operator, "audit.view", null, true],
  ["operator", operator, "users.manage", null, false],
  ["operator", operator, "settings.manage", null, false],
  ["operator", operator, "start", OWN, true],
  ["operator", operator, "stop", OWN, true],
  ["operator", operator, "restart", OWN, true],
  ["operator", operator, "reset-failed", OWN, true],
  ["operator", operator, "kill", OWN, false],
  ["operator", operator, "restart", "tgi-1.service", true],
  ["operator", operator, "restart", "tgi-12.service", false],
  ["operator", operator, "start", OTHER, false],
  ["operator", operator, "stop", OTHER, false],
  ["operator", operator, "restart", OTHER, false],
  ["operator", operator, "reset-failed", OTHER, false],
  ["operator", operator, "restart", "sshd.service", false],
  // admin: everything
  ["admin", admin, "view", null, true],
  ["admin", admin, "audit.view", null, true],
  ["admin", admin, "users.manage", null, true],
  ["admin", admin, "settings.manage", null, true],
  ["admin", admin, "start", OTHER, true],
  ["admin", admin, "stop", OTHER, true],
  ["admin", admin, "restart", "sshd.service", true],
  ["admin", admin, "reset-failed", OTHER, true],
  ["admin", admin, "kill", OWN, true],
];

describe("can()", () => {
  it.each(matrix)("%s %s %s %s → %s", (_label, subject, action, unit, expected) => {
    const d = can(subject, action, unit);
    expect(d.allowed).toBe(expected);
    if (!d.allowed) expect(d.reason.length).toBeGreaterThan(5);
  });

  it("explains refusals in words the UI can show", () => {
    expect(can(viewer, "restart", OWN)).toEqual({ allowed: false, reason: "viewers cannot change units" });
    expect(can(operator, "restart", OTHER)).toEqual({
      allowed: false,
      reason: `${OTHER} is not in your units (vllm-team-a-*, tgi-?.service)`,
    });
    expect(can(operator, "kill", OWN)).toEqual({ allowed: false, reason: "only admins can kill units" });
    expect(can({ role: "operator", unitPatterns: [] }, "restart", OWN)).toMatchObject({ reason: expect.stringMatching(/no unit patterns/) });
    expect(can(null, "view")).toEqual({ allowed: false, reason: "sign in first" });
  });

  it("lets operators kill when the policy says so, still only their units", () => {
    expect(can(operator, "kill", OWN, { operatorMayKill: true }).allowed).toBe(true);
    expect(can(operator, "kill", OTHER, { operatorMayKill: true }).allowed).toBe(false);
  });

  it("refuses disabled subjects and unknown roles or actions", () => {
    expect(can({ ...admin, disabled: true }, "view")).toMatchObject({ allowed: false, reason: "this account is disabled" });
    expect(can({ role: "root" as never, unitPatterns: ["*"] }, "restart", OWN).allowed).toBe(false);
    expect(can(admin, "reboot" as never, OWN)).toMatchObject({ allowed: false, reason: "unknown action 'reboot'" });
  });

  it.each(["--help", "-H evil", "a;reboot", "$(id).service", "../x.service", "", "x".repeat(300) + ".service", "vllm-team-a-ｘ.service", "vllm-team-a-x"])(
    "refuses the hostile unit name %j for every role, admin included",
    (unit) => {
      for (const subject of [viewer, operator, admin, { role: "operator" as const, unitPatterns: ["*"] }]) {
        const d = can(subject, "restart", unit);
        expect(d.allowed).toBe(false);
      }
    },
  );

  it("needs a unit for unit actions", () => {
    expect(can(admin, "restart")).toMatchObject({ allowed: false, reason: "restart needs a unit name" });
    expect(can(admin, "restart", null).allowed).toBe(false);
  });

  it("an operator pattern cannot be widened by regex metacharacters in the unit name", () => {
    const op: Subject = { role: "operator", unitPatterns: ["vllm.service"] };
    expect(can(op, "restart", "vllmXservice.service").allowed).toBe(false);
    expect(can(op, "restart", "vllm.service").allowed).toBe(true);
  });
});

describe("unitPermissions()", () => {
  it("gives every action with a decision", () => {
    const p = unitPermissions(operator, OWN);
    expect(Object.keys(p).sort()).toEqual(["kill", "reset-failed", "restart", "start", "stop"]);
    expect(p.restart.allowed).toBe(true);
    expect(p.kill).toEqual({ allowed: false, reason: "only admins can kill units" });
    expect(Object.values(unitPermissions(viewer, OWN)).every((d) => !d.allowed)).toBe(true);
  });
});

describe("host:pattern unit patterns (a fleet of hosts)", () => {
  const subject = (unitPatterns: string[]) => ({ role: "operator" as const, unitPatterns });
  const on = (host: string, unit: string) => ({ host, unit });

  it("a bare pattern means every host; host:pattern only that host (globs allowed on both sides)", () => {
    expect(can(subject(["vllm-a-*"]), "restart", on("gpu-b", "vllm-a-1.service")).allowed).toBe(true);
    expect(can(subject(["gpu-a:vllm-*"]), "restart", on("gpu-a", "vllm-x.service")).allowed).toBe(true);
    expect(can(subject(["gpu-a:vllm-*"]), "restart", on("gpu-b", "vllm-x.service"))).toEqual({
      allowed: false,
      reason: "gpu-b:vllm-x.service is not in your units (gpu-a:vllm-*)",
    });
    expect(can(subject(["*:vllm-team-a-*"]), "stop", on("gpu-z", "vllm-team-a-chat.service")).allowed).toBe(true);
    expect(can(subject(["gpu-?:vllm-*"]), "stop", on("gpu-c", "vllm-x.service")).allowed).toBe(true);
    expect(can(subject(["gpu-?:vllm-*"]), "stop", on("gpu-cc", "vllm-x.service")).allowed).toBe(false);
  });

  it("a host-prefixed pattern never covers a unit named without a host, except *:", () => {
    expect(can(subject(["gpu-a:vllm-*"]), "restart", "vllm-x.service").allowed).toBe(false);
    expect(can(subject(["*:vllm-*"]), "restart", "vllm-x.service").allowed).toBe(true);
  });
});
