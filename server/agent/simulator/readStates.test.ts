import { afterEach, describe, expect, it } from "vitest";
import { createSimulatedHost } from "./index";

describe("the simulator's readStates", () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it("reads units outside its globs (read-only) and calls unknown ones not-found; get() still refuses them", async () => {
    const host = createSimulatedHost({ unitGlobs: ["vllm-kimi-*.service"], gpuIntervalMs: 1000 });
    closers.push(() => host.systemd.close());
    await host.systemd.start(() => {});
    const outside = "vllm-embed-small.service"; // a demo unit, outside these globs
    expect(host.systemd.list().map((u) => u.name)).toEqual(["vllm-kimi-k25.service"]);
    const states = await host.systemd.readStates!([outside!, "nfs-models.mount", "bad name"]);
    expect(states.map((s) => s.name)).toEqual([outside, "nfs-models.mount"]);
    expect(states[0]).toMatchObject({ loadState: "loaded", activeState: expect.any(String), subState: expect.any(String) });
    expect(states[1]).toEqual({ name: "nfs-models.mount", loadState: "not-found", activeState: "inactive", subState: "dead", result: "" });
    expect(await host.systemd.get(outside!)).toBeNull();
    await expect(host.systemd.act(outside!, "start")).rejects.toThrow();
    expect((await host.systemd.get("vllm-kimi-k25.service"))?.requires).toEqual([]);
  });
});
