/**
 * deploy/grafana/gpudeck.json queries only what gpudeck exports: every metric name in every
 * panel's expr and every variable's query is one the agent's /metrics renders (collected here by
 * rendering a sample that reaches every series), or one of Prometheus's own (up).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { GpuSample, UnitSummary } from "../contract/types";
import { renderMetrics, type MetricsInput } from "./metrics";

const DASHBOARD = fileURLToPath(new URL("../../deploy/grafana/gpudeck.json", import.meta.url));
/** Prometheus's own series a dashboard may use */
const PROMETHEUS_METRICS = new Set(["up"]);
const KEYWORDS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "and", "or", "unless", "inf", "nan"]);

/** The metric names a PromQL expression reads (functions, keywords, labels and Grafana variables left out). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings
    .replace(/\{[^}]*\}/g, "") // label matchers
    .replace(/\[[^\]]*\]/g, "") // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "") // label lists
    .replace(/\$\{?[A-Za-z_]\w*\}?/g, ""); // Grafana variables
  const names: string[] = [];
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index! + m[0].length).trimStart();
    if (after.startsWith("(") || KEYWORDS.has(m[0].toLowerCase())) continue;
    if (/^\d/.test(bare.slice(m.index! - 1, m.index!))) continue; // the "e" of 1e3, the "m" of 5m
    names.push(m[0]);
  }
  return names;
}

const UUID = "GPU-5e1f0c2a-7b3d-4e8f-9a01-000000000001";

function unitSummary(name: string): UnitSummary {
  return {
    name,
    description: "",
    loadState: "loaded",
    unitFileState: "enabled",
    activeState: "active",
    subState: "running",
    result: "success",
    mainPid: 1,
    controlPid: 0,
    nRestarts: 2,
    stateChangeUsec: 0,
    job: null,
  } as UnitSummary;
}

/** A host where every series has something to show: live and exited holders, faults, engines. */
function everything(): MetricsInput {
  const holder = { pid: 5, unit: "vllm-a.service", processName: "VLLM::EngineCore", cmdline: [], state: "running", usedMiB: 100 };
  const sample = {
    atMs: 1,
    gpus: [
      {
        uuid: UUID,
        index: 0,
        name: "NVIDIA H200",
        pciBusId: "00000000:18:00.0",
        memoryTotalMiB: 143771,
        memoryUsedMiB: 1000,
        utilizationPct: 50,
        temperatureC: 40,
        powerW: 300,
        holders: [
          { ...holder, kind: "unit" },
          { ...holder, pid: 6, kind: "exited", state: "gone", exitedAtMs: 0 },
          { ...holder, pid: 7, unit: null, kind: "outside" },
        ],
        unattributedMiB: 10,
        throttleReasons: ["sw_power_cap"],
        eccCorrectedVolatile: 1,
        eccUncorrectedVolatile: 0,
      },
    ],
    memoryPool: { totalMiB: 1000, availableMiB: 500 },
  } as unknown as GpuSample;
  const readiness = { state: "serving", engine: "vllm", stage: null, progress: null, reason: null, sinceMs: 0, probe: null };
  const metrics = { atMs: 1, requestsRunning: 1, requestsWaiting: 2, kvCacheUsage: 0.5, generationTokensPerS: 100, ttftSeconds: 0.2 };
  return {
    sample,
    telemetry: { state: "ok", message: "", sinceMs: 0 },
    systemd: { state: "ok", message: "", sinceMs: 0 },
    units: [unitSummary("vllm-a.service")],
    eventStreams: 1,
    faults: [{ pci: "0000:18:00.0", gpuUuid: UUID, code: 79 }],
    engines: [{ unit: "vllm-a.service", readiness, metrics }],
  } as unknown as MetricsInput;
}

async function exportedNames(): Promise<Set<string>> {
  const text = await renderMetrics(everything());
  return new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
}

interface Panel {
  title?: string;
  type: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Panel[]; templating: { list: { name: string; type: string; query?: unknown }[] } };

function queries(): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) if (t.expr) out.push({ where: `panel "${p.title}"`, expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : (v.query as { query: string }).query;
    // Grafana's label_values(metric{…}, label): the metric is the first argument
    const m = /^label_values\(([^,]+),/.exec(q);
    out.push({ where: `variable $${v.name}`, expr: m ? m[1]! : q });
  }
  return out;
}

describe("metricNames (the PromQL reader this test relies on)", () => {
  it("finds metrics and skips functions, keywords, labels, ranges and variables", () => {
    expect(metricNames('sum by (instance, unit) (increase(gpudeck_unit_restarts_total{unit=~"$unit"}[$__rate_interval])) or vector(0)')).toEqual([
      "gpudeck_unit_restarts_total",
    ]);
    expect(metricNames('a_bytes{x="b_c"} / on (uuid) group_left(name) b_total offset 5m > 1e3')).toEqual(["a_bytes", "b_total"]);
  });
});

describe("deploy/grafana/gpudeck.json", () => {
  it("every query names only metrics gpudeck exports (or Prometheus's up)", async () => {
    const exported = await exportedNames();
    const unknown: string[] = [];
    for (const { where, expr } of queries()) {
      const names = metricNames(expr);
      if (names.length === 0) unknown.push(`${where}: names no metric: ${expr}`);
      for (const n of names) if (!exported.has(n) && !PROMETHEUS_METRICS.has(n)) unknown.push(`${where}: ${n}`);
    }
    expect(unknown).toEqual([]);
  });

  it("shows unit states, restarts, readiness, GPU memory by unit and exited holders", () => {
    const all = queries().map((q) => q.expr);
    for (const needed of ["gpudeck_unit_state", "gpudeck_unit_restarts_total", "gpudeck_unit_readiness", 'kind="unit"', 'kind="exited"']) {
      expect(
        all.some((e) => e.includes(needed)),
        needed,
      ).toBe(true);
    }
  });

  it("uses the datasource variable, not a fixed datasource", () => {
    const text = readFileSync(DASHBOARD, "utf8");
    const uids = [...text.matchAll(/"uid": "([^"]*)"/g)].map((m) => m[1]).filter((u) => u !== "gpudeck");
    expect(new Set(uids)).toEqual(new Set(["${datasource}"]));
  });
});
