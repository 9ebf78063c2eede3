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
    expect(html).toMatch(/role="img" aria-label="GPU memory, vllm.service&#x27;s GPUs: GPU 0, GPU 1, at 12:05:20: this unit 0 MiB, held by exited process [\d.]+ GiB/);
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
