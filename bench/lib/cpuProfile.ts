/**
 * Reads a V8 `.cpuprofile` (node --cpu-prof) and prints where the time went: self time per
 * function and per file/package, optionally leaving out the first seconds (start-up: tsx
 * compiling the sources) so that what remains is the steady state.
 *
 *   node --import tsx bench/lib/cpuProfile.ts FILE [--skip-s=15] [--top=30]
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  ms: number;
}

/** Self time (ms) per function and per file, over samples later than `skipS` seconds after the start. */
export function selfTimes(profile: Profile, skipS: number): { totalMs: number; windowMs: number; byFunction: SelfTime[]; byFile: SelfTime[] } {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let t = profile.startTime;
  let totalMs = 0;
  const from = profile.startTime + skipS * 1e6; // µs
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (t < from) continue;
    const node = nodes.get(profile.samples[i]!);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const ms = delta / 1000;
    if (functionName === "(idle)") continue;
    totalMs += ms;
    const file = shortFile(url);
    const fn = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
  }
  const sorted = (m: Map<string, number>) => [...m].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms);
  return { totalMs, windowMs: (profile.endTime - from) / 1000, byFunction: sorted(byFunction), byFile: sorted(byFile) };
}

/** `node_modules/@trpc/server/…` → `@trpc/server`; a project file → its path from the repo. */
function shortFile(url: string): string {
  if (!url) return "(native)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const m = /\/(server|e2e|bench)\/.*$/.exec(url);
  return m ? m[0].slice(1) : url.replace(/^file:\/\//, "");
}

function main() {
  const file = process.argv[2];
  if (!file) throw new Error("usage: cpuProfile.ts FILE [--skip-s=N] [--top=N]");
  const arg = (name: string, d: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? d);
  const top = arg("top", 30);
  const r = selfTimes(JSON.parse(readFileSync(file, "utf8")) as Profile, arg("skip-s", 15));
  console.log(`${r.totalMs.toFixed(0)} ms busy over ${(r.windowMs / 1000).toFixed(1)} s (${((100 * r.totalMs) / r.windowMs).toFixed(2)} % of a core)\n`);
  const print = (title: string, rows: SelfTime[]) => {
    console.log(title);
    for (const row of rows.slice(0, top))
      console.log(`${row.ms.toFixed(1).padStart(9)} ms ${((100 * row.ms) / r.totalMs).toFixed(1).padStart(5)} %  ${row.name}`);
    console.log("");
  };
  print("self time by file / package", r.byFile);
  print("self time by function", r.byFunction);
}

if (process.argv[1]?.endsWith("cpuProfile.ts")) main();
