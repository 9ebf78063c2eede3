/**
 * GPU memory as diagnosis evidence: who holds memory on the GPUs a unit waits for (see
 * ./gpu.ts for the analysis itself), and how that reads in evidence and headlines.
 */
import type { Evidence } from "../contract/diagnosis";
import { formatCmdline, formatDurationWords, formatGpus, formatMiBRounded, plural } from "../contract/format";
import type { DiagnosisContext } from "./context";
import { ago } from "./evidence";
import { analyseContention, gpusSelectedByNvidiaSmi, type GpuContention, type GpuRef, type HolderGroup } from "./gpu";

/** GPU data older than this is shown with its age. */
export const GPU_SAMPLE_STALE_MS = 5_000;

/**
 * GPU memory held on the GPUs the unit waits for: facts.unitGpus when given, else the GPUs its
 * ExecStartPre selects with `nvidia-smi -i` (from the command lines themselves, which are stable,
 * not from a caught nvidia-smi child), else the ones it used last time, else all.
 */
export function gpuContention(ctx: DiagnosisContext, controlArgv: readonly string[] | null = null): GpuContention | null {
  const sample = ctx.facts.gpuNow;
  if (!sample || sample.gpus.length === 0) return null;
  // The unit's processes are read at diagnosis time, the sample up to one interval earlier.
  const pids = ctx.unit.processes.length > 0 ? new Set(ctx.unit.processes.map((p) => p.pid)) : undefined;
  const texts = [...(controlArgv ? [controlArgv.join(" ")] : []), ...ctx.unit.execStartPre.map((c) => c.argv.join(" "))];
  const polled = gpusSelectedByNvidiaSmi(texts, sample);
  return analyseContention(ctx.name, sample, ctx.facts.gpuRecent, ctx.facts.unitGpus, pids, polled);
}

export function gpuSampleEvidence(ctx: DiagnosisContext): Evidence[] {
  const sample = ctx.facts.gpuNow;
  if (!sample) return [{ label: "GPU data", value: "none: nvidia-smi gave no sample", source: "nvidia-smi" }];
  const age = ctx.now - sample.atMs;
  return age > GPU_SAMPLE_STALE_MS ? [{ label: "GPU data", value: `last sample ${formatDurationWords(age)} old`, source: "nvidia-smi" }] : [];
}

export function describeGpuSet(c: GpuContention): string {
  const origin =
    c.gpuSource === "given"
      ? "the unit's GPUs"
      : c.gpuSource === "polled"
        ? "the GPUs its ExecStartPre queries (nvidia-smi -i)"
        : c.gpuSource === "history"
          ? "used by this unit last time it ran"
          : "all GPUs (the unit's own are not known)";
  const missing = c.missing.length > 0 ? `; ${plural(c.missing.length, "GPU")} not in the sample` : "";
  return `${formatGpus(c.gpus)} — ${origin}${missing}`;
}

export function memoryEvidence(c: GpuContention): Evidence {
  const used = c.usedMiB !== null ? formatMiBRounded(c.usedMiB) : "unknown (memory.used N/A)";
  const total = c.totalMiB !== null ? ` of ${formatMiBRounded(c.totalMiB)}` : "";
  return { label: "GPU memory used", value: `${used}${total} on ${formatGpus(c.gpus)}`, source: "nvidia-smi" };
}

export function holderEvidence(ctx: DiagnosisContext, group: HolderGroup): Evidence {
  const cmd = group.cmdline.length > 0 ? formatCmdline(group.cmdline, 100) : group.processName || "?";
  const where = group.kind === "outside" ? "outside any unit" : (group.unit ?? "unit unknown");
  const parts = [`${formatMiBRounded(group.mib)} on ${formatGpus(group.gpus)}`, where, cmd];
  if (group.kind === "exited") {
    if (group.exitedAtMs !== undefined) parts.push(`last seen alive ${ago(ctx, group.exitedAtMs)}`);
    if (group.state !== "gone") parts.push(`process state: ${group.state}`);
  }
  const label = group.kind === "exited" ? `Exited PID ${group.pid}` : group.kind === "outside" ? `PID ${group.pid} (no unit)` : `PID ${group.pid}`;
  return { label, value: parts.join(" · "), source: group.kind === "exited" ? "gpudeck" : "proc" };
}

/** "exited process 4121 of x.service", "PID 77 outside any unit", "y.service (PID 9)". */
export function holderPhrase(ctx: DiagnosisContext, g: HolderGroup): string {
  if (g.kind === "exited") return `exited process ${g.pid}${g.unit ? ` of ${g.unit}` : ""}`;
  if (g.kind === "outside") return `PID ${g.pid} outside any unit`;
  return g.unit === ctx.name ? `PID ${g.pid} left over in this unit` : `${g.unit ?? "a unit"} (PID ${g.pid})`;
}

export function pidList(pids: readonly number[], max = 3): string {
  const shown = pids.slice(0, max).join(", ");
  return pids.length > max ? `${shown} +${pids.length - max}` : shown;
}

export function allGpus(groups: readonly HolderGroup[]): GpuRef[] {
  return groups.flatMap((g) => g.gpus);
}

export const sumMiB = (groups: readonly HolderGroup[]): number => groups.reduce((s, g) => s + g.mib, 0);
