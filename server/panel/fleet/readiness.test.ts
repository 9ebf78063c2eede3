/**
 * Readiness through the panel: the agent's `readiness` events reach fleet, host and unit
 * viewers, and the panel's mirror of the host's units (units.list, fleet snapshots) carries it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../../agent/main";
import type { PanelEvent } from "../../contract/fleet";
import { wireTransformer } from "../../contract/wire";
import { startTestAgent } from "../panelTestHarness";
import { Fleet } from "./fleet";
import type { StreamItem } from "./fanout";

const KIMI = "vllm-kimi-k25.service";
let agent: RunningAgent;
let fleet: Fleet;

beforeAll(async () => {
  agent = await startTestAgent();
  fleet = new Fleet([{ name: "gpu-a", url: agent.url, token: agent.token, tokenSource: "test", source: "file" }], {
    link: { log: () => {}, retryMinMs: 100, retryMaxMs: 500 },
    summaryIntervalMs: 100,
  });
  fleet.start();
}, 30_000);

afterAll(async () => {
  fleet?.stop();
  await agent?.close();
});

async function collect(gen: AsyncGenerator<StreamItem>, until: (e: PanelEvent) => boolean, timeoutMs = 15_000): Promise<PanelEvent[]> {
  const seen: PanelEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  // next() by hand: a for-await that returns early would close the stream
  while (Date.now() < deadline) {
    const { value, done } = await gen.next();
    if (done) break;
    const e = wireTransformer.deserialize(wireTransformer.serialize(value.data)) as PanelEvent;
    seen.push(e);
    if (until(e)) return seen;
  }
  throw new Error(`not seen; got ${seen.map((e) => e.kind).join(", ")}`);
}

describe("readiness in the fleet", () => {
  it("the mirror's unit carries readiness; a restart's loading and serving reach fleet and unit viewers", async () => {
    await expect.poll(() => fleet.get("gpu-a")?.units.get(KIMI)?.readiness?.state, { timeout: 10_000 }).toBe("serving");
    const ctl = new AbortController();
    const fleetView = fleet.watch({ watch: "fleet" }, null, ctl.signal);
    const unitView = fleet.watch({ watch: "unit", host: "gpu-a", name: KIMI }, null, ctl.signal);
    const snapshot = await collect(fleetView, (e) => e.kind === "fleet-snapshot");
    const snap = snapshot.at(-1)!;
    if (snap.kind !== "fleet-snapshot") throw new Error("unreachable");
    expect(snap.units.find((u) => u.name === KIMI)?.readiness?.state).toBe("serving");
    await agent.hub.host.systemd.act(KIMI, "restart");
    const unitEvents = await collect(
      unitView,
      (e) => e.kind === "readiness" && e.readiness.state === "serving" && e.readiness.sinceMs > Date.now() - 10_000,
      20_000,
    );
    const fleetEvents = await collect(fleetView, (e) => e.kind === "readiness" && e.unit === KIMI && e.readiness.state === "loading");
    ctl.abort();
    expect(unitEvents.filter((e) => e.kind === "readiness").map((e) => (e.kind === "readiness" ? e.readiness.state : ""))).toContain("loading");
    expect(fleetEvents.at(-1)).toMatchObject({ kind: "readiness", host: "gpu-a", unit: KIMI });
    await expect.poll(() => fleet.get("gpu-a")?.units.get(KIMI)?.readiness?.state, { timeout: 10_000 }).toBe("serving");
  }, 40_000);
});
