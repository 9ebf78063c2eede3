/**
 * What reading an engine's log costs the agent: every journal line of an engine unit goes
 * through the readiness tracker (split into records, ANSI removed, matched against the engine's
 * pattern table and the common one). Measured on a real-format vLLM start (e2e/fakes/engine-logs)
 * repeated to 100 000 lines, against a baseline that only splits and strips each message, in the
 * same run so the numbers mean something on any machine.
 *
 *   node --import tsx bench/readiness-lines.ts
 */
import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";
import type { JournalEntry } from "@/server/contract/types";
import { recordsOf } from "@/server/agent/readiness/lines";
import { ReadinessTracker } from "@/server/agent/readiness/tracker";
import { smoke } from "./lib/args";
import { printHeader } from "./lib/machine";

const LINES = smoke ? 5_000 : 100_000;
const RUNS = smoke ? 2 : 5;
printHeader("Readiness: the tracker on real-format vLLM log lines", smoke);

const sample = readFileSync(new URL("../e2e/fakes/engine-logs/vllm-load.log", import.meta.url), "utf8")
  .split("\n")
  .filter((l) => l !== "" && !l.startsWith("#"))
  .map((l) => l.replace(/\\e/g, "\u001b").replace(/\\r/g, "\r").replace(/\\c$/, ""));
const messages = Array.from({ length: LINES }, (_, i) => sample[i % sample.length]!);
const entries: JournalEntry[] = messages.map((message, i) => ({
  cursor: `c${i}`,
  atUsec: 1_000_000 + i,
  unit: "vllm-a.service",
  priority: 6,
  pid: 4128,
  message,
}));

function time(run: () => void): number {
  const best: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    run();
    best.push(performance.now() - t0);
  }
  return Math.min(...best);
}

const baseline = time(() => {
  let n = 0;
  for (const m of messages) for (const part of stripVTControlCharacters(m).split(/\r\n|\r|\n/)) n += part.trim().length;
  if (n < 0) throw new Error("unreachable");
});
const records = time(() => {
  for (const m of messages) recordsOf(m);
});
const tracker = time(() => {
  const t = new ReadinessTracker("vllm", true, 0);
  t.begin(0, true);
  for (const e of entries) t.line(e);
});

const per = (ms: number) => `${((ms * 1000) / LINES).toFixed(2)} µs/line`;
console.log(`${LINES} vLLM log lines, best of ${RUNS}:`);
console.log(`  baseline (split + strip ANSI): ${baseline.toFixed(1)} ms  ${per(baseline)}`);
console.log(`  records (lines.ts):            ${records.toFixed(1)} ms  ${per(records)}`);
console.log(`  tracker (records + patterns):  ${tracker.toFixed(1)} ms  ${per(tracker)}  (${(tracker / baseline).toFixed(1)}× the baseline)`);
