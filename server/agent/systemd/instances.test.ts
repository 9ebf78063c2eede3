/**
 * Template instances: what lands in `%i` is chosen by whoever names the unit, so instances are
 * validated beyond systemd's characters, unit globs match them only when they say so, and looking
 * at an instance nobody started does not create it; nor does looking at (or someone loading) a
 * name that matches the globs but has no unit file make the agent list it for everyone.
 */
import { describe, expect, it } from "vitest";
import { matchesUnitGlobs, matchesUnitPatterns, unitNameProblem } from "../../contract/unitNames";
import { DbusSystemdAdapter } from "./adapter";
import { isUnitInstance } from "./unitGuard";
import { UnitTracker } from "./unitTracker";
import type { BusConnection } from "./bus";
import type { JobTracker } from "./jobTracker";
import type { SystemdCalls } from "./systemdCalls";

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

describe("units.get on an instance nobody started, or a name with no unit file", () => {
  function adapterWithFakeBus(unitFiles: string[] = []) {
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
      unitFileExists: async (_c: unknown, name: string) => {
        calls.push(`GetUnitFileState ${name}`);
        return unitFiles.includes(name);
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

  it("a plain unit whose file exists but is not loaded is loaded to be read", async () => {
    const { adapter, calls } = adapterWithFakeBus(["vllm-b.service"]);
    await adapter.get("vllm-b.service");
    expect(calls.slice(0, 4)).toEqual(["GetUnit vllm-b.service", "GetUnitFileState vllm-b.service", "LoadUnit vllm-b.service", "GetAll"]);
  });

  it("an allow-listed plain name with no unit file is not found, and never loaded (no phantom unit for everyone)", async () => {
    const { adapter, calls } = adapterWithFakeBus();
    expect(await adapter.get("vllm-b.service")).toBeNull();
    expect(calls).toEqual(["GetUnit vllm-b.service", "GetUnitFileState vllm-b.service"]);
    expect(await adapter.readEnvironment("vllm-b.service", ["VLLM_PORT"])).toEqual({});
    expect(calls.filter((c) => c.startsWith("LoadUnit"))).toEqual([]);
  });
});

describe("UnitNew of a name with no unit file (someone looked it up or tried to start it)", () => {
  function tracker(globs: string[]) {
    const props: Record<string, Record<string, unknown>> = {
      "/u/phantom": { Id: "vllm-phantom.service", LoadState: "not-found", ActiveState: "inactive", SubState: "dead" },
      "/u/real": { Id: "vllm-real.service", LoadState: "loaded", ActiveState: "inactive", SubState: "dead" },
    };
    const calls = {
      getAll: async (_c: unknown, path: string) => props[path]!,
      getAllWithSeq: async (_c: unknown, path: string) => ({ props: props[path]!, seq: 1 }),
      loadUnit: async () => {
        throw new Error("LoadUnit must not be called");
      },
      call: async () => [],
    } as unknown as SystemdCalls;
    const jobs = { ensureType: async () => undefined, typeOf: () => null } as unknown as JobTracker;
    const conn = { addMatch: async () => undefined } as unknown as BusConnection;
    const units = new UnitTracker({ calls, jobs, globs, emit: () => undefined, log: () => undefined });
    return { units, conn };
  }

  it("is not tracked (no phantom in everyone's list); a real new unit is", async () => {
    const { units, conn } = tracker(["vllm-*.service"]);
    await units.unitNew(conn, "vllm-phantom.service", "/u/phantom");
    await units.unitNew(conn, "vllm-real.service", "/u/real");
    expect(units.list().map((u) => u.name)).toEqual(["vllm-real.service"]);
  });

  it("a name the globs spell out is tracked even without a file (shown as not-found, as discovery does)", async () => {
    const { units, conn } = tracker(["vllm-*.service", "vllm-phantom.service"]);
    await units.unitNew(conn, "vllm-phantom.service", "/u/phantom");
    expect(units.list().map((u) => [u.name, u.loadState])).toEqual([["vllm-phantom.service", "not-found"]]);
  });
});
