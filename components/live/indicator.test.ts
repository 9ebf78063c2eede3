import { describe, expect, it } from "vitest";
import { hostSnapshot, summary, unit } from "./fixtures";
import { indicatorOf } from "./indicator";
import { LiveStore } from "./store";

describe("indicatorOf", () => {
  it("says nothing where the page watches nothing", () => {
    expect(indicatorOf(new LiveStore(null))).toBeNull();
  });

  it("on the fleet overview: the stream's state, and the hosts that are down as problems", () => {
    const store = new LiveStore({ watch: "fleet" });
    expect(indicatorOf(store)!.state).toBe("connecting");
    store.apply("fleet~p-0", { kind: "fleet-snapshot", hosts: [summary("gpu-a"), summary("gpu-c", { state: "down" })], units: [], atMs: 0 });
    store.setConnection("live");
    expect(indicatorOf(store)).toEqual({ state: "live", text: "live", host: null, problems: ["gpu-c down"] });
  });

  it("on a host's page: live only while the host is connected too", () => {
    const store = new LiveStore({ watch: "unit", host: "gpu-a", name: "a.service" });
    store.apply("gpu-a~b-1", hostSnapshot("gpu-a", [unit("a.service")]));
    store.setConnection("live");
    expect(indicatorOf(store)!.state).toBe("live");
    store.apply("gpu-a~b-1", { kind: "hosts", hosts: [summary("gpu-a", { state: "down", error: "refused" })] });
    expect(indicatorOf(store)).toMatchObject({ state: "host-down", text: "down", host: "gpu-a" });
    store.apply("gpu-a~b-1", { kind: "hosts", hosts: [summary("gpu-a", { state: "connecting" })] });
    expect(indicatorOf(store)!.state).toBe("host-connecting");
    // the browser's own stream trouble comes first
    store.setConnection("reconnecting");
    expect(indicatorOf(store)!.state).toBe("reconnecting");
  });

  it("names the watched host's backend problems", () => {
    const store = new LiveStore({ watch: "host", host: "gpu-a" });
    store.apply("gpu-a~b-1", hostSnapshot("gpu-a", [], { systemd: { state: "unreachable", message: "no bus", sinceMs: 0 } }));
    expect(indicatorOf(store)!.problems).toEqual(["systemd unreachable: no bus"]);
  });
});
