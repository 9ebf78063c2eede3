/**
 * Ray (vLLM's multi-GPU and multi-node executor): workers that never get their GPUs. vLLM waits
 * for a placement group it cannot place, logging the bundles it asked for every few seconds,
 * and gives up after its timeout (or is stopped first: then the only exception is the
 * shutdown's CancelledError, not the cause). These lines name the cause; ./vllm.ts includes them.
 */
import type { LinePattern } from "./types";

/** "[{'GPU': 1.0, 'node:10.0.0.5': 0.001}, {'GPU': 1.0}]" → 2 (GPUs summed over the bundles). */
export function gpusIn(specs: string): number {
  let n = 0;
  for (const m of specs.matchAll(/['"]GPU['"]\s*:\s*([\d.]+)/g)) n += Number(m[1]);
  return Math.round(n * 100) / 100;
}

const short = (s: string) => (s.length > 160 ? `${s.slice(0, 160)}…` : s);

function placementWords(specs: string): string {
  const gpus = gpusIn(specs);
  return `Ray cannot place the placement group for the engine's workers (${gpus} GPU${gpus === 1 ? "" : "s"} asked: ${short(specs)}): the Ray cluster has not that many free GPUs`;
}

export const RAY_PATTERNS: LinePattern[] = [
  {
    id: "ray-pg-wait",
    // "INFO 05-01 03:12:40 [ray_utils.py:345] Waiting for creating a placement group of specs for 30 seconds. specs=[{'GPU': 1.0, 'node:10.0.0.5': 0.001}, {'GPU': 1.0}]. Check `ray status` …"
    re: /Waiting for creating a placement group of specs for (\d+) seconds\. specs=(\[.*?\])\./,
    meaning: (m) => ({ stage: "waiting for GPUs (Ray placement group)", cause: `${placementWords(m[2]!)}; waited ${m[1]} s` }),
  },
  {
    id: "ray-pg-timeout",
    // "ValueError: Cannot provide a placement group of placement_group_specs=[{'GPU': 1.0}, {'GPU': 1.0}] within 1800 seconds. See `ray status` …"
    re: /Cannot provide a placement group of (?:placement_group_specs=)?(\[.*?\]) within (\d+) seconds/,
    meaning: (m) => ({ failure: `${placementWords(m[1]!)}; gave up after ${m[2]} s` }),
  },
  {
    id: "ray-unschedulable",
    // "(autoscaler +1m5s) Warning: The following resource request cannot be scheduled right now: {'GPU': 1.0, 'CPU': 1.0}. This is likely due to all cluster resources being claimed by actors. …"
    re: /The following resource request cannot be scheduled right now: (\{[^}]*\})/,
    meaning: (m) => ({ cause: `Ray cannot schedule a worker asking ${short(m[1]!)}: no free GPU in the Ray cluster (all claimed, or fewer than asked)` }),
  },
  {
    id: "ray-no-gpu",
    // "ValueError: Current node has no GPU available. current_node_resource={'CPU': 64.0, …}. vLLM engine cannot start without GPU. …"
    re: /Current node has no GPU available/,
    meaning: () => ({ failure: "Ray sees no free GPU on this node (current node has no GPU available)" }),
  },
];
