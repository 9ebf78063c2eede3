/**
 * How long the GPU memory chart's data preparation takes for its worst case: 24 h of 1 Hz
 * samples on 8 GPUs (86 400 samples), stacked by holder class and downsampled to 1 200 px.
 * Compared in the same run with a naive baseline (array methods per sample, no downsampling)
 * so the numbers mean something on any machine.
 *
 *   node --import tsx bench/chart-stack.ts
 */
import type { GpuSample } from "@/server/contract/types";
import { incidentDay } from "@/components/gpu-chart/fixtures";
import { MEMORY_CLASSES, StackCache, stackMemory, unitGpuUuids } from "@/components/gpu-chart/stack";
import { smoke } from "./lib/args";
import { printHeader } from "./lib/machine";

const UNIT = "vllm-kimi-k25.service";
const SECONDS = smoke ? 3_600 : 86_400;
const GPUS = 8;
const PIXELS = 1200;
const RUNS = smoke ? 2 : 7;

/** The obvious implementation: filter/reduce per sample, every sample kept. */
function naiveStack(samples: readonly GpuSample[], unit: string, fromMs: number, toMs: number) {
  const inWindow = samples.filter((s) => s.atMs >= fromMs && s.atMs <= toMs);
  const uuids = new Set(inWindow.flatMap((s) => s.gpus.filter((g) => g.holders.some((h) => h.unit === unit)).map((g) => g.uuid)));
  const rows = inWindow.map((s) => {
    const gs = s.gpus.filter((g) => uuids.has(g.uuid));
    const sum = (pick: (g: (typeof gs)[number]) => number) => gs.reduce((a, g) => a + pick(g), 0);
    const me = sum((g) => g.holders.filter((h) => h.kind === "unit" && h.unit === unit).reduce((a, h) => a + h.usedMiB, 0));
    const exited = sum((g) => g.holders.filter((h) => h.kind === "exited").reduce((a, h) => a + h.usedMiB, 0));
    const other = sum((g) => g.holders.filter((h) => h.kind === "unit" && h.unit !== unit).reduce((a, h) => a + h.usedMiB, 0));
    const outside = sum((g) => g.holders.filter((h) => h.kind === "outside").reduce((a, h) => a + h.usedMiB, 0) + g.unattributedMiB);
    const total = sum((g) => g.memoryTotalMiB ?? 0);
    return { x: s.atMs / 1000, me, exited, other, outside, total };
  });
  const xs = rows.map((r) => r.x);
  const cumulative = [
    rows.map((r) => r.me),
    rows.map((r) => r.me + r.exited),
    rows.map((r) => r.me + r.exited + r.other),
    rows.map((r) => r.me + r.exited + r.other + r.outside),
  ];
  return { xs, cumulative, total: rows.map((r) => r.total) };
}

function time<T>(fn: () => T): { ms: number; result: T } {
  const t0 = performance.now();
  const result = fn();
  return { ms: performance.now() - t0, result };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

printHeader(`GPU memory chart: stacking ${SECONDS} samples × ${GPUS} GPUs`, smoke);
const startMs = Date.UTC(2025, 0, 12);
// A few extra seconds so the live case can slide the window by one sample per run.
const gen = time(() => incidentDay({ startMs, seconds: SECONDS + RUNS + 2, gpus: GPUS, unit: UNIT }));
const stream = gen.result;
const samples = stream.slice(0, SECONDS);
const fromMs = startMs;
const toMs = startMs + SECONDS * 1000;
console.log(`fixture: ${samples.length} samples × ${GPUS} GPUs generated in ${gen.ms.toFixed(0)} ms`);

const cases: [string, () => unknown][] = [
  ["naive (no downsampling)", () => naiveStack(samples, UNIT, fromMs, toMs)],
  ["stackMemory sum, 1200 px", () => stackMemory(samples, { unit: UNIT, mode: "sum", fromMs, toMs, pixels: PIXELS })],
  [
    "stackMemory sum, GPUs given",
    () => stackMemory(samples, { unit: UNIT, mode: "sum", gpuUuids: ["GPU-0", "GPU-1", "GPU-2", "GPU-3"], fromMs, toMs, pixels: PIXELS }),
  ],
  ["stackMemory per-gpu, 1200 px", () => stackMemory(samples, { unit: UNIT, mode: "per-gpu", gpuUuid: "GPU-0", fromMs, toMs, pixels: PIXELS })],
  ["stackMemory sum, 15 min window", () => stackMemory(samples, { unit: UNIT, mode: "sum", fromMs: toMs - 900_000, toMs, pixels: PIXELS })],
  ["unitGpuUuids alone", () => unitGpuUuids(samples, UNIT, fromMs, toMs)],
  // A live chart: the cache holds the day; each run one new sample arrives, the oldest drops out.
  [
    "stackMemory sum, live tick (cache)",
    () => {
      tick++;
      const window = stream.slice(tick, tick + SECONDS);
      return stackMemory(window, { unit: UNIT, mode: "sum", fromMs: fromMs + tick * 1000, toMs: toMs + tick * 1000, pixels: PIXELS }, liveCache);
    },
  ],
];
const liveCache = new StackCache();
let tick = 0;
stackMemory(samples, { unit: UNIT, mode: "sum", fromMs, toMs, pixels: PIXELS }, liveCache);

for (const [, fn] of cases) fn(); // warm-up (JIT)
const results: Record<string, number> = {};
for (const [name, fn] of cases) {
  const runs: number[] = [];
  let out: unknown;
  for (let i = 0; i < RUNS; i++) {
    const t = time(fn);
    runs.push(t.ms);
    out = t.result;
  }
  results[name] = median(runs);
  const points = out && typeof out === "object" && "xs" in out ? (out as { xs: unknown[] }).xs.length : null;
  console.log(
    `${name.padEnd(34)} median ${median(runs).toFixed(1).padStart(7)} ms  (min ${Math.min(...runs).toFixed(1)})${points != null ? `  → ${points} points for uPlot` : ""}`,
  );
}
const naive = results["naive (no downsampling)"]!;
const cold = results["stackMemory sum, 1200 px"]!;
const live = results["stackMemory sum, live tick (cache)"]!;
console.log(
  `vs naive: cold ${(naive / cold).toFixed(1)}× faster, live tick ${(naive / live).toFixed(0)}× faster; ` +
    `uPlot gets ≤ 5 rows per pixel column instead of ${SECONDS} (${MEMORY_CLASSES.length} stacked series + ceiling)`,
);
