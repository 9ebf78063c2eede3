/**
 * Template instances: what lands in `%i` is chosen by whoever names the unit, so instances are
 * validated beyond systemd's characters, unit globs match them only when they say so, and looking
 * at an instance nobody started does not create it.
 */
import { describe, expect, it } from "vitest";
import { matchesUnitGlobs, matchesUnitPatterns, unitNameProblem } from "../../contract/unitNames";
import { DbusSystemdAdapter } from "./adapter";
import { isUnitInstance } from "./unitGuard";

describe("instance names", () => {
  it.each([
    ["vllm-a@--x.service", /instance \(after '@'\) must not start with '-'/],
    ["vllm-a@-H.service", /must not start with '-'/],
    ["vllm-a@.hidden.service", /instance \(after '@'\) must not start with '\.'/],
    ["vllm-a@a\\b.service", /only as a systemd escape/],
    ["vllm-a@a\\x2.service", /only as a systemd escape/],
    ["vllm\\-a.service", /only as a systemd escape/],
  ])("%s is refused", (name, message) => {
    expect(unitNameProblem(name)).toMatch(message);
  });

  it.each(["vllm-a@x.service", "vllm-a@\\x2dx.service", "vllm-a@gpu0-gpu1.service", "vllm-a@.service", "getty@tty1.service", "vllm-a@a.b.service"])(
    "%s is accepted",
    (name) => {
      expect(unitNameProblem(name)).toBeNull();
    },
  );

  it("tells instances from templates and plain units", () => {
    expect(isUnitInstance("vllm@a.service")).toBe(true);
    expect(isUnitInstance("vllm@a.b.service")).toBe(true);
    expect(isUnitInstance("vllm@.service")).toBe(false);
    expect(isUnitInstance("vllm.service")).toBe(false);
  });
});

describe("globs and templates", () => {
  it("a glob without '@' matches no template and no instance", () => {
    for (const name of ["vllm-a@x.service", "vllm-a@--x.service", "vllm-a@.service"]) {
      expect(matchesUnitGlobs(name, ["vllm-a*", "vllm-*.service", "*"])).toBe(false);
      expect(matchesUnitPatterns(name, "gpu-a", ["vllm-*", "*:vllm-a*", "gpu-a:*"])).toBe(false);
    }
    expect(matchesUnitGlobs("vllm-a.service", ["vllm-a*"])).toBe(true);
  });

  it("a glob with '@' matches the template's instances (and the template) explicitly", () => {
    expect(matchesUnitGlobs("vllm-a@x.service", ["vllm-a@*.service"])).toBe(true);
    expect(matchesUnitGlobs("vllm-a@.service", ["vllm-a@*.service"])).toBe(true);
    expect(matchesUnitGlobs("vllm-b@x.service", ["vllm-a@*.service"])).toBe(false);
    expect(matchesUnitPatterns("vllm-a@x.service", "gpu-a", ["gpu-a:vllm-a@*"])).toBe(true);
    expect(matchesUnitGlobs("vllm-a@x.service", ["*@*"])).toBe(true);
  });
});

describe("units.get on an instance nobody started", () => {
  function adapterWithFakeBus() {
    const adapter = new DbusSystemdAdapter({ unitGlobs: ["vllm-a@*.service", "vllm-b.service"], cgroupRoot: null }, null);
    const calls: string[] = [];
    const conn = {};
    const fake = adapter as unknown as { link: unknown; calls: unknown };
    fake.link = { conn, systemdOwner: ":1.1", status: () => ({ state: "ok", message: "", sinceMs: 0 }) };
    fake.calls = {
      loadUnit: async (_c: unknown, name: string) => {
        calls.push(`LoadUnit ${name}`);
        return "/org/freedesktop/systemd1/unit/x";
      },
      unitPathIfLoaded: async (_c: unknown, name: string) => {
        calls.push(`GetUnit ${name}`);
        return null;
      },
      getAll: async () => {
        calls.push("GetAll");
        return { Id: "x", LoadState: "loaded", ActiveState: "inactive", SubState: "dead" };
      },
    };
    return { adapter, calls };
  }

  it("asks systemd whether it is loaded (GetUnit) and never loads it (LoadUnit): not found", async () => {
    const { adapter, calls } = adapterWithFakeBus();
    expect(await adapter.get("vllm-a@probe.service")).toBeNull();
    expect(calls).toEqual(["GetUnit vllm-a@probe.service"]);
  });

  it("a plain unit is still loaded to be read (its file may exist unloaded)", async () => {
    const { adapter, calls } = adapterWithFakeBus();
    await adapter.get("vllm-b.service");
    expect(calls.slice(0, 2)).toEqual(["LoadUnit vllm-b.service", "GetAll"]);
  });
});
