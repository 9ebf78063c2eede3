/**
 * The overview's unit changes are coalesced per tick: a restart's many events reach each
 * overview viewer as the latest `unit` and `readiness` of each unit, with the tick's summaries.
 */
import { describe, expect, it } from "vitest";
import type { PanelEvent } from "../../contract/fleet";
import { preserializedJson } from "../../contract/wire";
import { Fanout, type StreamItem } from "./fanout";
import type { HostLink } from "./hostLink";

const link = { name: "gpu-a" } as HostLink;
const unitEvent = (name: string, activeState: string): PanelEvent => ({ kind: "unit", host: "gpu-a", unit: { name, activeState } as never });
const readiness = (unit: string, state: string): PanelEvent => ({ kind: "readiness", host: "gpu-a", unit, readiness: { state } as never });
const kinds = (items: StreamItem[]) => items.map((i) => JSON.parse(preserializedJson(i.data)!) as PanelEvent);

describe("the overview's unit changes", () => {
  it("go out once per tick: the latest unit and readiness of each unit, a removal as a removal", () => {
    const fanout = new Fanout({ get: () => undefined, all: () => [] });
    const got: StreamItem[] = [];
    const sub = fanout.subscribe({ watch: "fleet" }, null, (i) => got.push(i));
    expect(kinds(got).map((e) => e.kind)).toEqual(["fleet-snapshot"]);
    let seq = 0;
    const send = (event: PanelEvent, unit: string) => fanout.hostEvent(link, { seq: ++seq, id: `gpu-a~b-${seq}`, event, unit });
    for (const s of ["deactivating", "inactive", "activating", "active"]) send(unitEvent("x.service", s), "x.service");
    for (const s of ["loading", "loading", "serving"]) send(readiness("x.service", s), "x.service");
    send(unitEvent("y.service", "active"), "y.service");
    send({ kind: "unit-removed", host: "gpu-a", name: "y.service" }, "y.service");
    expect(got).toHaveLength(1);
    fanout.summaries([]);
    expect(kinds(got.slice(1))).toEqual([
      unitEvent("x.service", "active"),
      readiness("x.service", "serving"),
      { kind: "unit-removed", host: "gpu-a", name: "y.service" },
    ]);
    // ids go on from the snapshot's, so a resuming viewer gets exactly what came after
    expect(got.slice(1).map((i) => i.id)).toEqual(["1", "2", "3"].map((n) => `fleet~${fanout.bootId}-${n}`));
    fanout.summaries([]);
    expect(got).toHaveLength(4);
    sub.close();
  });
});
