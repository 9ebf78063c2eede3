/**
 * The fleet hub against real agents on simulated hosts: one agent stream per host whatever the
 * number of viewers, fan-out by scope, a viewer too slow for its queue gets a snapshot, and
 * resume by event id across the panel's reconnect to the agent and across an agent restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../../agent/main";
import type { PanelEvent } from "../../contract/fleet";
import { wireTransformer } from "../../contract/wire";
import { startTestAgent } from "../panelTestHarness";
import { Fleet } from "./fleet";
import type { StreamItem } from "./fanout";

const KIMI = "vllm-kimi-k25.service";
const EMBED = "vllm-embed-small.service";

/** What the browser's client makes of an item (the transformer undoes the one-time serialization). */
const decode = (item: StreamItem) => wireTransformer.deserialize(wireTransformer.serialize(item.data)) as PanelEvent;

/** Reads a stream in the background; `until` waits for an event that matches. */
function reader(gen: AsyncGenerator<StreamItem>) {
  const seen: { id: string; event: PanelEvent }[] = [];
  let done = false;
  void (async () => {
    for await (const item of gen) seen.push({ id: item.id, event: decode(item) });
    done = true;
  })();
  return {
    seen,
    get done() {
      return done;
    },
    async until(match: (e: PanelEvent) => boolean, timeoutMs = 10_000): Promise<{ id: string; event: PanelEvent }> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = seen.find((s) => match(s.event));
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; saw ${seen.map((s) => s.event.kind).join(", ")}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

let a: RunningAgent;
let b: RunningAgent;
let aDir: string;
let aPort: number;
let fleet: Fleet;

async function connected(name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (fleet.get(name)?.state !== "connected" || fleet.get(name)?.bootId === null) {
    if (Date.now() > deadline) throw new Error(`${name} did not connect: ${fleet.get(name)?.error}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  aDir = mkdtempSync(path.join(tmpdir(), "gpudeck-fleet-a-"));
  a = await startTestAgent({ dataDir: aDir });
  aPort = Number(new URL(a.url).port);
  b = await startTestAgent();
  fleet = new Fleet(
    [
      { name: "gpu-a", url: a.url, token: a.token, tokenSource: "test", source: "file" },
      { name: "gpu-b", url: b.url, token: b.token, tokenSource: "test", source: "file" },
    ],
    { link: { log: () => {}, retryMinMs: 100, retryMaxMs: 500 }, summaryIntervalMs: 100, viewerQueueLimit: 50 },
  );
  fleet.start();
  await connected("gpu-a");
  await connected("gpu-b");
}, 30_000);

afterAll(async () => {
  fleet?.stop();
  await Promise.allSettled([a?.close(), b?.close()]);
  rmSync(aDir, { recursive: true, force: true });
});

describe("fleet hub", () => {
  it("holds one agent stream per host, whether 0 or 300 viewers watch", async () => {
    expect(a.hub.subscriberCount()).toBe(1);
    const ctl = new AbortController();
    const viewers = Array.from({ length: 300 }, (_, i) => reader(fleet.watch(i % 2 ? { watch: "host", host: "gpu-a" } : { watch: "fleet" }, null, ctl.signal)));
    await Promise.all(viewers.map((v) => v.until((e) => e.kind === "host-snapshot" || e.kind === "fleet-snapshot")));
    expect(fleet.viewerCount()).toBe(300);
    expect(a.hub.subscriberCount()).toBe(1);
    expect(b.hub.subscriberCount()).toBe(1);
    ctl.abort();
    await expect.poll(() => fleet.viewerCount()).toBe(0);
    expect(a.hub.subscriberCount()).toBe(1);
  });

  it("sends each scope what it looks at: host viewers their host's GPU samples, unit viewers one unit, the fleet summaries and no samples", async () => {
    const ctl = new AbortController();
    const fleetView = reader(fleet.watch({ watch: "fleet" }, null, ctl.signal));
    const hostView = reader(fleet.watch({ watch: "host", host: "gpu-b" }, null, ctl.signal));
    const unitView = reader(fleet.watch({ watch: "unit", host: "gpu-a", name: EMBED }, null, ctl.signal));
    const snap = await fleetView.until((e) => e.kind === "fleet-snapshot");
    if (snap.event.kind !== "fleet-snapshot") throw new Error("unreachable");
    expect(snap.event.hosts.map((h) => h.name)).toEqual(["gpu-a", "gpu-b"]);
    expect(new Set(snap.event.units.map((u) => u.host))).toEqual(new Set(["gpu-a", "gpu-b"]));
    const unitSnap = await unitView.until((e) => e.kind === "host-snapshot");
    if (unitSnap.event.kind !== "host-snapshot") throw new Error("unreachable");
    expect(unitSnap.event.units.map((u) => u.name)).toEqual([EMBED]);

    await a.hub.host.systemd.act(KIMI, "restart");
    await a.hub.host.systemd.act(EMBED, "restart");
    await unitView.until((e) => e.kind === "transition" && e.transition.unit === EMBED);
    await hostView.until((e) => e.kind === "gpu" && e.host === "gpu-b");
    await fleetView.until((e) => e.kind === "unit" && e.host === "gpu-a" && e.unit.name === KIMI);
    await fleetView.until((e) => e.kind === "hosts");
    await unitView.until((e) => e.kind === "gpu" && e.host === "gpu-a");
    ctl.abort();
    expect(fleetView.seen.some((s) => s.event.kind === "gpu")).toBe(false);
    expect(unitView.seen.some((s) => "transition" in s.event && s.event.transition.unit === KIMI)).toBe(false);
    expect(hostView.seen.every((s) => !("host" in s.event) || s.event.host === "gpu-b")).toBe(true);
  });

  it("viewers that connect at the same position share one snapshot, serialized once; a change of the host makes a new one", async () => {
    const ctl = new AbortController();
    const scope = { watch: "host", host: "gpu-b" } as const;
    const [first, second] = await Promise.all([fleet.watch(scope, null, ctl.signal).next(), fleet.watch(scope, null, ctl.signal).next()]);
    expect(second.value!.id).toBe(first.value!.id);
    expect(second.value!.data).toBe(first.value!.data);
    await expect.poll(() => fleet.get("gpu-b")!.currentId(), { timeout: 5000 }).not.toBe(first.value!.id); // its next GPU sample
    const later = await fleet.watch(scope, null, ctl.signal).next();
    expect(later.value!.data).not.toBe(first.value!.data);
    expect(decode(later.value!)).toMatchObject({ kind: "host-snapshot", host: "gpu-b" });
    ctl.abort();
  });

  it("tells fleet and host viewers when an admin removes a host", async () => {
    fleet.put({ name: "gpu-x", url: b.url, token: b.token, tokenSource: "test", source: "panel" });
    await connected("gpu-x");
    const ctl = new AbortController();
    const fleetView = reader(fleet.watch({ watch: "fleet" }, null, ctl.signal));
    const hostView = reader(fleet.watch({ watch: "host", host: "gpu-x" }, null, ctl.signal));
    await fleetView.until((e) => e.kind === "fleet-snapshot");
    await hostView.until((e) => e.kind === "host-snapshot");
    expect(fleet.remove("gpu-x")).toBe(true);
    await fleetView.until((e) => e.kind === "host-removed" && e.host === "gpu-x");
    await hostView.until((e) => e.kind === "host-removed" && e.host === "gpu-x");
    ctl.abort();
    expect(fleet.get("gpu-x")).toBeUndefined();
  });

  it("gives a viewer that cannot keep up a fresh snapshot instead of growing its queue", async () => {
    const ctl = new AbortController();
    const gen = fleet.watch({ watch: "host", host: "gpu-a" }, null, ctl.signal);
    const first = await gen.next(); // the snapshot; then nobody reads for a while
    expect(decode(first.value as StreamItem).kind).toBe("host-snapshot");
    // 50 events fit the queue; the simulator sends ~5 GPU samples a second plus transitions
    await a.hub.host.systemd.act(KIMI, "restart");
    await new Promise((r) => setTimeout(r, 12_000));
    const next = await gen.next();
    expect(decode(next.value as StreamItem).kind).toBe("host-snapshot");
    ctl.abort();
    await gen.return(undefined);
  }, 30_000);

  it("resumes a viewer by event id after the panel's stream to the agent was cut, with nothing lost or repeated", async () => {
    const ctl = new AbortController();
    const first = reader(fleet.watch({ watch: "unit", host: "gpu-a", name: EMBED }, null, ctl.signal));
    await first.until((e) => e.kind === "host-snapshot");
    const lastId = first.seen.at(-1)!.id;
    ctl.abort();
    // cut the panel's stream to the agent (as a network blip would) and act at once: the link
    // resumes after its last agent event id and the agent replays what happened meanwhile
    a.dropConnections();
    await a.hub.host.systemd.act(EMBED, "restart");
    const live = reader(fleet.watch({ watch: "host", host: "gpu-a" }, null, new AbortController().signal));
    await live.until((e) => e.kind === "transition" && e.transition.unit === EMBED && e.transition.to.activeState === "active");
    const ctl2 = new AbortController();
    const resumed = reader(fleet.watch({ watch: "unit", host: "gpu-a", name: EMBED }, lastId, ctl2.signal));
    await resumed.until((e) => e.kind === "transition" && e.transition.to.activeState === "active");
    ctl2.abort();
    expect(resumed.seen.some((s) => s.event.kind === "host-snapshot")).toBe(false);
    const transitions = resumed.seen.filter((s) => s.event.kind === "transition").map((s) => s.id);
    expect(transitions.length).toBeGreaterThanOrEqual(2);
    expect(new Set(transitions).size).toBe(transitions.length); // each agent event once
  });

  it("replays exactly what a viewer missed while the agent stream stayed up", async () => {
    const ctl = new AbortController();
    const v = reader(fleet.watch({ watch: "host", host: "gpu-a" }, null, ctl.signal));
    await v.until((e) => e.kind === "host-snapshot");
    const lastId = v.seen.at(-1)!.id;
    ctl.abort();
    await a.hub.host.systemd.act(EMBED, "restart");
    const live = reader(fleet.watch({ watch: "unit", host: "gpu-a", name: EMBED }, null, new AbortController().signal));
    await live.until((e) => e.kind === "transition" && e.transition.to.activeState === "active");
    const ctl2 = new AbortController();
    const resumed = reader(fleet.watch({ watch: "host", host: "gpu-a" }, lastId, ctl2.signal));
    await resumed.until((e) => e.kind === "hosts");
    ctl2.abort();
    expect(resumed.seen.some((s) => s.event.kind === "host-snapshot")).toBe(false);
    const replayed = resumed.seen.filter((s) => s.event.kind === "transition" && s.event.transition.unit === EMBED);
    expect(replayed.length).toBeGreaterThanOrEqual(2);
  });

  it("after the agent restarts: the host is down with the error, then connected with a new boot, and an old id gets a fresh snapshot", async () => {
    const ctl = new AbortController();
    const v = reader(fleet.watch({ watch: "host", host: "gpu-a" }, null, ctl.signal));
    await v.until((e) => e.kind === "host-snapshot");
    const oldId = v.seen.at(-1)!.id;
    const oldBoot = a.hub.bootId;
    await a.close();
    await expect.poll(() => fleet.get("gpu-a")!.state, { timeout: 10_000 }).toBe("down");
    expect(fleet.get("gpu-a")!.error).toMatch(/could not be reached|closed/);
    await v.until((e) => e.kind === "hosts" && e.hosts[0]!.state === "down");
    expect(fleet.get("gpu-b")!.state).toBe("connected"); // the other host is not affected
    a = await startTestAgent({ dataDir: aDir, port: aPort });
    await expect.poll(() => fleet.get("gpu-a")!.bootId, { timeout: 15_000 }).toBe(a.hub.bootId);
    expect(a.hub.bootId).not.toBe(oldBoot);
    await v.until((e) => e.kind === "host-snapshot" && e.bootId === a.hub.bootId);
    ctl.abort();
    const ctl2 = new AbortController();
    const resumed = reader(fleet.watch({ watch: "host", host: "gpu-a" }, oldId, ctl2.signal));
    const snap = await resumed.until((e) => e.kind === "host-snapshot");
    ctl2.abort();
    if (snap.event.kind !== "host-snapshot") throw new Error("unreachable");
    expect(snap.event.bootId).toBe(a.hub.bootId);
    expect(snap.event.summary.state).toBe("connected");
  }, 40_000);
});
