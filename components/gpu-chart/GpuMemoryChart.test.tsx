import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import { incidentDay } from "./fixtures";
import { GpuMemoryChart } from "./GpuMemoryChart";

const T0 = Date.UTC(2025, 0, 12, 12, 0, 0);
const U = "vllm.service";
// 10 minutes on 4 GPUs; the server is killed at 300 s, memory drains until 330 s
const samples = incidentDay({ startMs: T0, seconds: 600, gpus: 4, unit: U, killAtS: 300, reloadAtS: 400 });

function render(extra: Partial<Parameters<typeof GpuMemoryChart>[0]> = {}) {
  return renderToString(
    <GpuMemoryChart
      samples={samples}
      unit={U}
      mode="sum"
      onModeChange={() => {}}
      window={{ fromMs: T0, toMs: T0 + 600_000 }}
      timeZone="UTC"
      initialWidth={800}
      {...extra}
    />,
  );
}

describe("GpuMemoryChart (server render)", () => {
  it("names the GPUs summed and shows the latest values per holder class", () => {
    const html = render();
    expect(html).toContain("vllm.service&#x27;s GPUs: GPU 0, GPU 1");
    expect(html).toContain("held by exited process");
    expect(html).toMatch(/class="[^"]*gd-mem-exited/);
    expect(html).toContain("total");
    expect(html).toContain("281 GiB"); // 2 × 143 771 MiB ceiling
  });

  it("summarises the values and the exited-memory peak for screen readers", () => {
    const html = render({ window: { fromMs: T0 + 250_000, toMs: T0 + 320_000 } });
    expect(html).toMatch(
      /role="img" aria-label="GPU memory, vllm.service&#x27;s GPUs: GPU 0, GPU 1, at 12:05:20: this unit 0 MiB, held by exited process [\d.]+ GiB/,
    );
    expect(html).toMatch(/Peak memory held by exited processes in view: 137 GiB at 12:05:00\./);
  });

  it("switches to one GPU with a selector in per-GPU mode", () => {
    const html = render({ mode: "per-gpu", selectedGpuUuid: "GPU-1" });
    expect(html).toContain("· <!-- -->GPU 1");
    expect(html).toMatch(/<select[^>]*>.*GPU 0 · NVIDIA H200.*GPU 3 · NVIDIA H200/);
    expect(html).toMatch(/aria-pressed="true"[^>]*>Per GPU/);
  });

  it("says so when there are no samples in the window", () => {
    const html = render({ window: { fromMs: T0 - 7_200_000, toMs: T0 - 3_600_000 } });
    expect(html).toContain("No GPU memory samples in this time range.");
  });
});

describe("GpuMemoryChart: spans no agent watched", () => {
  // 12:02:10 – 12:03:40 (1 min 30 s) in the 10-minute window: 744 px for 600 s
  const gap = { fromMs: T0 + 130_000, toMs: T0 + 220_000 };

  it("shades a gap in view at the timeline's x, labelled, with a legend entry and a summary for screen readers", () => {
    const html = render({ unobserved: [gap] });
    const shades = html.match(/<div aria-hidden="true" data-testid="gpu-gap"[^>]*>/g) ?? [];
    expect(shades).toHaveLength(1);
    const x = 44 + (130 / 600) * 744;
    expect(shades[0]).toContain(`left:${x}px`);
    expect(shades[0]).toMatch(/class="gd-gap /);
    expect(shades[0]).toContain("top:8px;bottom:24px");
    // ≈ 112 px: room for the short text only
    expect(html).toMatch(/data-testid="gpu-gap"[^>]*><span[^>]*>no samples<\/span>/);
    expect(html).toMatch(/data-testid="gpu-legend-gap"><span[^>]*gd-gap[^>]*><\/span><dt>no samples: agent not running<\/dt>/);
    expect(html).toMatch(/role="img" aria-label="GPU memory[^"]* No samples while no agent was running: 12:02:10 – 12:03:40 \(1 min 30 s\)\."/);
  });

  it("writes the whole label on a wide gap", () => {
    const html = render({ unobserved: [{ fromMs: T0 + 300_000, toMs: T0 + 600_000 }] });
    expect(html).toMatch(/data-testid="gpu-gap"[^>]*><span[^>]*>no samples: agent not running<\/span>/);
  });

  it("draws nothing for a gap outside the window", () => {
    const html = render({ unobserved: [{ fromMs: T0 - 600_000, toMs: T0 - 60_000 }] });
    expect(html).not.toContain("gpu-gap");
    expect(html).not.toContain("agent not running");
    expect(html).not.toContain("no agent was running");
  });
});

describe("GpuMemoryChart: the plot (SVG, no chart library)", () => {
  it("draws a band per class, the exited one hatched, the dashed ceiling and GiB ticks in the gutter", () => {
    const html = render({ window: { fromMs: T0 + 250_000, toMs: T0 + 320_000 } });
    expect(html).toContain('data-testid="gpu-memory-plot"');
    const hatch = html.match(/<pattern id="([^"]+)"/)?.[1];
    expect(hatch).toBeTruthy();
    expect(html).toMatch(new RegExp(`data-class="exited" d="M[^"]+" style="fill:url\\(#${hatch}\\)"`));
    expect(html).toMatch(/data-class="this" d="M[^"]+" style="fill:var\(--gd-mem-this\)"/);
    expect(html).toMatch(/stroke-dasharray="6 4"/);
    // right-aligned 4 px left of the plot, which starts at gutter.left (44)
    expect(html).toMatch(/<text x="40"[^>]*text-anchor="end"[^>]*>100<\/text>/);
    expect(html).toMatch(/<text x="[\d.]+" y="[\d.]+" text-anchor="middle"[^>]*>12:0\d:\d0<\/text>/);
  });
});
