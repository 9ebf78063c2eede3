/**
 * Series Grafana's panels and `increase()` need from the start, before anything has gone wrong:
 * Xid counters at 0 for every GPU and known code, ECC counts at 0 (the simulator reports them as
 * a healthy GPU with ECC on does), and gpudeck_systemd_up on a running agent's /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GpuFault } from "../contract/faults";
import type { BackendStatus, GpuSample } from "../contract/types";
import { startTestAgent } from "../panel/panelTestHarness";
import { XID_CODES } from "./faults/xidCodes";
import { driverPci } from "./healthMetrics";
import type { RunningAgent } from "./main";
import { renderMetrics } from "./metrics";

const ok: BackendStatus = { state: "ok", message: "", sinceMs: 0 };
const stale: BackendStatus = { state: "stale", message: "no sample for 3.1 s", sinceMs: 0 };
const gpu = (uuid: string, pciBusId: string) => ({
  uuid,
  index: 0,
  name: "NVIDIA H200",
  pciBusId,
  memoryTotalMiB: 143771,
  memoryUsedMiB: 0,
  utilizationPct: 0,
  temperatureC: 30,
  powerW: 100,
  holders: [],
  unattributedMiB: 0,
});
const sample: GpuSample = { atMs: 1, gpus: [gpu("GPU-a", "00000000:18:00.0"), gpu("GPU-b", "00000000:3B:00.0")] };

function value(text: string, seriesName: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${seriesName} `));
  return line === undefined ? undefined : Number(line.slice(seriesName.length + 1));
}

describe("Xid counters", () => {
  it("every GPU has a series at 0 for every known code before any Xid", async () => {
    const text = await renderMetrics({ sample, telemetry: ok, units: [], faults: [] });
    for (const [uuid, pci] of [
      ["GPU-a", "0000:18:00"],
      ["GPU-b", "0000:3b:00"],
    ]) {
      for (const code of XID_CODES.keys()) expect(value(text, `gpudeck_gpu_xid_errors_total{pci="${pci}",uuid="${uuid}",code="${code}"}`)).toBe(0);
    }
    expect(text.match(/^gpudeck_gpu_xid_errors_total\{/gm)).toHaveLength(2 * XID_CODES.size);
  });

  it("an Xid counts on the same series its 0 was on; an unknown code or GPU gets its own", async () => {
    const fault = (code: number, pci: string, gpuUuid: string | null) => ({ code, pci, gpuUuid }) as GpuFault;
    const faults = [fault(79, "0000:3b:00", "GPU-b"), fault(79, "0000:3b:00", "GPU-b"), fault(999, "0000:18:00", "GPU-a"), fault(13, "0000:99:00", null)];
    const text = await renderMetrics({ sample, telemetry: ok, units: [], faults });
    expect(value(text, 'gpudeck_gpu_xid_errors_total{pci="0000:3b:00",uuid="GPU-b",code="79"}')).toBe(2);
    expect(value(text, 'gpudeck_gpu_xid_errors_total{pci="0000:18:00",uuid="GPU-a",code="79"}')).toBe(0);
    expect(value(text, 'gpudeck_gpu_xid_errors_total{pci="0000:18:00",uuid="GPU-a",code="999"}')).toBe(1);
    expect(value(text, 'gpudeck_gpu_xid_errors_total{pci="0000:99:00",uuid="",code="13"}')).toBe(1);
  });

  it("the series stay while telemetry is stale (a counter must not vanish and come back)", async () => {
    const text = await renderMetrics({ sample, telemetry: stale, units: [], faults: [] });
    expect(value(text, 'gpudeck_gpu_xid_errors_total{pci="0000:18:00",uuid="GPU-a",code="79"}')).toBe(0);
  });

  it("PCI addresses as the driver prints them", () => {
    expect(driverPci("00000000:3B:00.0")).toBe("0000:3b:00");
    expect(driverPci("00000001:04:1F.0")).toBe("0001:04:1f");
    expect(driverPci("")).toBe("");
  });
});

describe("a running agent's /metrics (simulated host)", () => {
  let agent: RunningAgent;
  let text = "";
  beforeAll(async () => {
    agent = await startTestAgent();
    const deadline = Date.now() + 10_000;
    // the first GPU sample arrives shortly after start
    while (!/^gpudeck_gpu_ecc_errors_volatile\{/m.test(text) && Date.now() < deadline) {
      const res = await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${agent.token}` } });
      text = await res.text();
      if (!/^gpudeck_gpu_ecc_errors_volatile\{/m.test(text)) await new Promise((r) => setTimeout(r, 200));
    }
  });
  afterAll(async () => agent?.close());

  it("says systemd is reachable", () => {
    expect(value(text, "gpudeck_systemd_up")).toBe(1);
  });

  it("has ECC counts at 0 and Xid counters at 0 for every GPU", () => {
    const uuids = [...text.matchAll(/^gpudeck_gpu_memory_total_bytes\{uuid="([^"]+)"/gm)].map((m) => m[1]!);
    expect(uuids.length).toBeGreaterThan(0);
    for (const uuid of uuids) {
      expect(text).toMatch(new RegExp(`^gpudeck_gpu_ecc_errors_volatile\\{uuid="${uuid}",type="corrected"\\} 0$`, "m"));
      expect(text).toMatch(new RegExp(`^gpudeck_gpu_ecc_errors_volatile\\{uuid="${uuid}",type="uncorrected"\\} 0$`, "m"));
      expect(text).toMatch(new RegExp(`^gpudeck_gpu_xid_errors_total\\{pci="[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}",uuid="${uuid}",code="79"\\} 0$`, "m"));
    }
  });
});
