/** Case 8, load problems (cases/loadState.ts), through diagnose(). */
import { describe, expect, it } from "vitest";
import { diagnose } from "../diagnose";
import { ago, facts, systemdLine, unit, values } from "../fixtures";

describe("case 8 — load state and dependencies", () => {
  it("unit unknown to systemd (null detail)", () => {
    const d = diagnose(facts({ unit: null, requestedName: "vllm-typo.service" }));
    expect(d.code).toBe("not-found");
    expect(d.severity).toBe("critical");
    expect(d.headline).toContain("systemd has no unit named vllm-typo.service");
  });

  it("LoadState=not-found", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "not-found", activeState: "inactive", subState: "dead", fragmentPath: "" }) }));
    expect(d.code).toBe("not-found");
  });

  it("masked", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "masked", unitFileState: "masked", activeState: "inactive", subState: "dead" }) }));
    expect(d.code).toBe("masked");
    expect(d.headline).toContain("systemctl unmask vllm-kimi-k25.service");
  });

  it("bad-setting: quotes systemd's complaint", () => {
    const journal = [
      systemdLine(ago(5), "/etc/systemd/system/vllm-kimi-k25.service:9: Unknown key name 'ExecStartt' in section 'Service', ignoring.", { priority: 4 }),
      systemdLine(ago(5), "vllm-kimi-k25.service: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing.", { priority: 3 }),
    ];
    const d = diagnose(facts({ unit: unit({ loadState: "bad-setting", activeState: "inactive", subState: "dead" }), journal }));
    expect(d.code).toBe("bad-setting");
    expect(d.headline).toContain("Service has no ExecStart=");
    expect(values(d)).toContain("Unknown key name 'ExecStartt'");
    expect(d.nextStep?.text).toContain("/etc/systemd/system/vllm-kimi-k25.service");
  });

  it("LoadState=error", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "error", activeState: "inactive", subState: "dead" }) }));
    expect(d.code).toBe("load-error");
  });

  it("still running after its unit file was removed", () => {
    const d = diagnose(facts({ unit: unit({ loadState: "not-found" }) }));
    expect(d.code).toBe("unit-file-gone");
    expect(d.severity).toBe("warning");
  });
});
