import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import { gpu, holder } from "./fixtures";
import { GpuStrip } from "./GpuStrip";

describe("GpuStrip (server render)", () => {
  const gpus = [
    gpu(1, [holder("unit", "other.service", 20_000)]),
    gpu(0, [holder("unit", "vllm.service", 70_000, 11), holder("exited", "vllm.service", 7_000, 4242), holder("outside", null, 1_000, 77)], {
      unattributedMiB: 1_024,
    }),
    gpu(2, [holder("unit", "tiny.service", 2_048)], { memoryTotalMiB: null, memoryUsedMiB: null }),
  ];
  const html = renderToString(<GpuStrip gpus={gpus} unitHref={(u) => `/units/${u}`} highlightUnit="vllm.service" />);

  it("writes used / total per GPU, in index order", () => {
    const i0 = html.indexOf("GPU 0");
    const i1 = html.indexOf("GPU 1");
    expect(i0).toBeGreaterThan(-1);
    expect(i1).toBeGreaterThan(i0);
    expect(html).toContain("77.2 / 140 GiB"); // 70000 + 7000 + 1000 + 1024 MiB = 77.17 GiB
  });

  it("shows exited-process memory as its own hatched part, described for screen readers", () => {
    expect(html).toMatch(/class="[^"]*gd-mem-exited[^"]*"/);
    expect(html).toContain("held by exited process 6.8 GiB (PID 4242 (was vllm.service) 6.8 GiB)");
  });

  it("labels unit parts, links them and colours them by unit", () => {
    expect(html).toContain('href="/units/vllm.service"');
    expect(html).toMatch(/background:hsl\(\d+ var\(--gd-unit-s, 62%\) var\(--gd-unit-l, 52%\)\)/);
    expect(html).toContain("inset 0 0 0 2px var(--gd-focus)"); // highlighted unit
    expect(html).toContain("outside units / unattributed");
  });

  it("says memory not reported for GPUs without totals, never 0", () => {
    expect(html).toContain("GPU 2");
    expect(html).toContain("memory not reported");
    expect(html).not.toMatch(/GPU 2[^<]*0\.0/);
    expect(html).toContain("tiny.service");
  });

  it("handles no GPUs", () => {
    expect(renderToString(<GpuStrip gpus={[]} />)).toContain("No GPUs reported.");
  });
});
