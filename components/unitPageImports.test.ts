/**
 * What the unit page downloads before anything is opened or scrolled to (its JavaScript budget,
 * bench/route-js.ts): the modules reachable from its entry through static value imports. A
 * dynamic `import()` (React.lazy, WhenVisible) and `import type` are not followed: they are
 * not in the page's first download. zod (≈ 32 KB compressed) is for the servers' inputs; the
 * browser needs none of it, so a client module that imports a helper from a contract file with
 * schemas pulls it in unseen.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "..");

function resolve(from: string, spec: string): string | null {
  const base = spec.startsWith("@/") ? path.join(ROOT, spec.slice(2)) : spec.startsWith(".") ? path.resolve(path.dirname(from), spec) : null;
  if (base === null) return null;
  for (const c of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts"), path.join(base, "index.tsx")])
    if (/\.tsx?$/.test(c) && existsSync(c)) return c;
  return null;
}

/** Static value imports and re-exports of a file: project files resolved, packages by name. */
export function valueImports(file: string): { files: string[]; packages: string[] } {
  const src = readFileSync(file, "utf8");
  const files: string[] = [];
  const packages: string[] = [];
  const re = /^(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*["']([^"']+)["']|^import\s+["']([^"']+)["']/gm;
  for (const m of src.matchAll(re)) {
    const spec = m[3] ?? m[4]!;
    if (m[1]) continue; // import type / export type
    const names = m[2] ?? "";
    const braces = /\{([^}]*)\}/.exec(names);
    const outside = braces ? names.replace(braces[0], "").replace(/,/g, "").trim() : names.trim();
    // `import { type A, type B } from` is erased; a default or namespace import is not
    if (braces && outside === "" && braces[1]!.split(",").every((n) => n.trim() === "" || /^type\s/.test(n.trim()))) continue;
    const resolved = resolve(file, spec);
    if (resolved) files.push(resolved);
    else if (!spec.startsWith(".") && !spec.startsWith("@/")) packages.push(spec);
  }
  return { files, packages };
}

/** Every package reachable from `entry`, with one chain of files that reaches it. */
export function reachablePackages(entry: string): Map<string, string[]> {
  const seen = new Set<string>([entry]);
  const chains = new Map<string, string[]>();
  const queue: string[][] = [[entry]];
  while (queue.length) {
    const chain = queue.shift()!;
    const { files, packages } = valueImports(chain.at(-1)!);
    for (const p of packages)
      if (!chains.has(p))
        chains.set(
          p,
          chain.map((f) => path.relative(ROOT, f)),
        );
    for (const f of files) {
      if (seen.has(f)) continue;
      seen.add(f);
      queue.push([...chain, f]);
    }
  }
  return chains;
}

describe("the unit page's first download", () => {
  const entry = path.join(ROOT, "components/UnitView.tsx");

  it("imports no zod (a contract file with schemas, reached for a helper)", () => {
    const zod = reachablePackages(entry).get("zod");
    expect(zod, zod ? `zod through ${zod.join(" → ")}` : "").toBeUndefined();
  });

  it("imports no uPlot (the charts are SVG)", () => {
    expect(reachablePackages(entry).get("uplot")).toBeUndefined();
  });

  it("follows static imports and skips type-only ones (the walker itself)", () => {
    const { files, packages } = valueImports(path.join(ROOT, "server/contract/journalSearch.ts"));
    expect(packages).toContain("zod");
    expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(["fleet.ts", "journalGrep.ts", "unitNames.ts"]));
  });
});

describe("the small lanes (GPU telemetry, engine latency)", () => {
  /** every project file reachable from `entry` through static imports, `entry` included */
  function reachableFiles(entry: string): string[] {
    const seen = new Set<string>([entry]);
    const queue = [entry];
    while (queue.length)
      for (const f of valueImports(queue.shift()!).files)
        if (!seen.has(f)) {
          seen.add(f);
          queue.push(f);
        }
    return [...seen];
  }

  it.each([
    "components/gpu-chart/TelemetryLanes.tsx",
    "components/timeline/EngineLanes.tsx",
    "components/GpusView.tsx",
    "components/gpu-chart/GpuMemoryChart.tsx",
    "components/UnitGpuHistory.tsx",
  ])("%s draws without uPlot, not even loaded later (the unit page's first view and the GPU page)", (file) => {
    const uplot = reachableFiles(path.join(ROOT, file)).filter((f) => /import\(\s*["']uplot["']\)|from\s+["']uplot["']/.test(readFileSync(f, "utf8")));
    expect(uplot.map((f) => path.relative(ROOT, f))).toEqual([]);
  });
});
