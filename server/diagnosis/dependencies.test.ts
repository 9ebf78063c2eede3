import { describe, expect, it } from "vitest";
import type { UnitStateReading } from "../contract/types";
import { MAX_DEPENDENCIES, readDependencyStates } from "./dependencies";

const reading = (name: string, activeState = "active", subState = "running", over: Partial<UnitStateReading> = {}): UnitStateReading => ({
  name,
  loadState: "loaded",
  activeState,
  subState,
  result: "success",
  ...over,
});

/** An adapter answering from a table, recording what it was asked. */
function tableAdapter(table: Record<string, UnitStateReading>, extra: UnitStateReading[] = []) {
  const asked: string[][] = [];
  return {
    asked,
    async readStates(names: string[]) {
      asked.push([...names]);
      return [...names.flatMap((n) => (table[n] ? [table[n]] : [])), ...extra];
    },
  };
}

describe("readDependencyStates", () => {
  const GLOBS = ["vllm-*.service", "models-*.mount"];

  it("reads the required units in systemd's order and marks the ones in the allow-list", async () => {
    const adapter = tableAdapter({
      "models-nfs.mount": reading("models-nfs.mount", "failed", "failed", { result: "exit-code" }),
      "vllm-weights.service": reading("vllm-weights.service", "inactive", "dead"),
      "system.slice": reading("system.slice", "active", "active", { result: "" }),
    });
    const states = await readDependencyStates({ requires: ["models-nfs.mount", "vllm-weights.service", "system.slice"] }, adapter, GLOBS);
    expect(states).toEqual([
      { name: "models-nfs.mount", loadState: "loaded", activeState: "failed", subState: "failed", result: "exit-code", manageable: true },
      { name: "vllm-weights.service", loadState: "loaded", activeState: "inactive", subState: "dead", result: "success", manageable: true },
      { name: "system.slice", loadState: "loaded", activeState: "active", subState: "active", result: "", manageable: false },
    ]);
  });

  it("bounded: asks for the first MAX_DEPENDENCIES names only", async () => {
    const names = Array.from({ length: 40 }, (_, i) => `dep-${i}.service`);
    const adapter = tableAdapter(Object.fromEntries(names.map((n) => [n, reading(n)])));
    const states = await readDependencyStates({ requires: names }, adapter, GLOBS);
    expect(adapter.asked).toEqual([names.slice(0, MAX_DEPENDENCIES)]);
    expect(states?.map((s) => s.name)).toEqual(names.slice(0, MAX_DEPENDENCIES));
  });

  it("keeps only names it asked for, once each (the adapter does not decide what a button targets)", async () => {
    const adapter = tableAdapter({ "models-nfs.mount": reading("models-nfs.mount") }, [
      reading("vllm-other.service", "failed", "failed"),
      reading("models-nfs.mount", "failed", "failed"),
    ]);
    const states = await readDependencyStates({ requires: ["models-nfs.mount"] }, adapter, GLOBS);
    expect(states?.map((s) => s.name)).toEqual(["models-nfs.mount"]);
  });

  it("a name that is not a valid unit name is never manageable, whatever the globs", async () => {
    const odd = "vllm-x.service\n";
    const states = await readDependencyStates({ requires: [odd] }, tableAdapter({ [odd]: reading(odd) }), ["*"]);
    expect(states?.[0]?.manageable).toBe(false);
  });

  it("nothing to say: no requires, no readStates, an error, or nothing readable", async () => {
    const adapter = tableAdapter({});
    expect(await readDependencyStates({ requires: [] }, adapter, GLOBS)).toBeUndefined();
    expect(adapter.asked).toEqual([]); // no bus call for a unit that requires nothing
    expect(await readDependencyStates({ requires: ["a.service"] }, {}, GLOBS)).toBeUndefined();
    const failing = { readStates: async () => Promise.reject(new Error("bus gone")) };
    expect(await readDependencyStates({ requires: ["a.service"] }, failing, GLOBS)).toBeUndefined();
    expect(await readDependencyStates({ requires: ["a.service"] }, adapter, GLOBS)).toBeUndefined();
  });
});
