"use client";
/**
 * One GPU's utilisation, temperature and power over time (uPlot, loaded in the browser only).
 * Values nvidia-smi did not report are gaps, never zeros.
 */
import { useEffect, useRef, useState } from "react";
import type uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { GpuSample } from "@/server/contract/types";

export function telemetrySeries(samples: readonly GpuSample[], uuid: string): uPlot.AlignedData {
  const xs: number[] = [];
  const util: (number | null)[] = [];
  const temp: (number | null)[] = [];
  const power: (number | null)[] = [];
  for (const s of samples) {
    const g = s.gpus.find((x) => x.uuid === uuid);
    if (!g) continue;
    xs.push(s.atMs / 1000);
    util.push(g.utilizationPct);
    temp.push(g.temperatureC);
    power.push(g.powerW);
  }
  return [xs, util, temp, power];
}

export function GpuTelemetryChart({ samples, uuid, height = 140 }: { samples: readonly GpuSample[]; uuid: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [UPlot, setUPlot] = useState<typeof uPlot | null>(null);
  const data = telemetrySeries(samples, uuid);

  useEffect(() => {
    let alive = true;
    void import("uplot").then((m) => alive && setUPlot(() => m.default));
    return () => {
      alive = false;
    };
  }, []);

  useEffect(() => {
    const el = box.current;
    if (!UPlot || !el) return;
    const u = new UPlot(
      {
        width: el.clientWidth || 300,
        height,
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
        scales: { pct: { range: [0, 100] }, w: { auto: true } },
        axes: [
          { stroke: "#71717a", grid: { stroke: "rgba(128,128,128,0.15)" } },
          { scale: "pct", stroke: "#71717a", size: 40, values: (_u, v) => v.map((x) => `${x}`), grid: { stroke: "rgba(128,128,128,0.15)" } },
          { scale: "w", side: 1, stroke: "#71717a", size: 44, grid: { show: false } },
        ],
        series: [
          {},
          { label: "util %", scale: "pct", stroke: "#2563eb", width: 1.5, spanGaps: false },
          { label: "temp °C", scale: "pct", stroke: "#ea580c", width: 1.5, dash: [4, 3], spanGaps: false },
          { label: "power W", scale: "w", stroke: "#16a34a", width: 1.5, spanGaps: false },
        ],
      },
      [[], [], [], []],
      el,
    );
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [UPlot, height]);

  useEffect(() => {
    plot.current?.setData(data);
  });

  return <div ref={box} className="w-full min-w-0 overflow-hidden" aria-label="GPU utilisation, temperature and power over the last 30 minutes" role="img" />;
}
