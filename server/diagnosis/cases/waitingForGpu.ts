/**
 * Cases 1–3: waiting in ExecStartPre for GPU memory, held by another running unit, a process
 * left over in this unit, a process outside any unit, an exited process (draining), or nobody
 * listed. The analysis of what runs and who holds memory is ./startPre.ts's, shared with the
 * plain start-pre case that comes after this one.
 */
import type { Diagnosis, Evidence, NextStep } from "../../contract/diagnosis";
import {
  CLD_DUMPED,
  CLD_KILLED,
  formatClock,
  formatCmdline,
  formatDurationWords,
  formatGpus,
  formatMiBRounded,
  formatRate,
  plural,
} from "../../contract/format";
import type { DiagnosisCase } from "../case";
import type { DiagnosisContext } from "../context";
import { ago, quote } from "../evidence";
import { DRAIN_TEARDOWN_GRACE_MS, estimateDrain, gpusHeldBy, type DrainEstimate, type GpuContention, type GpuRef, type HolderGroup } from "../gpu";
import { allGpus, describeGpuSet, gpuSampleEvidence, holderEvidence, memoryEvidence, pidList, sumMiB } from "../gpuEvidence";
import { findProcessExit } from "../history";
import { cldName } from "../lastFailure";
import { inStartPre, startPreWait } from "../startPre";
import { timeoutClause } from "../startDeadline";

export const waitingForGpuCase: DiagnosisCase = {
  id: "waiting-for-gpu",
  codes: ["waiting-gpu-unit", "waiting-gpu-leftover", "waiting-gpu-outside", "waiting-gpu-exited", "waiting-gpu-unattributed"],
  diagnose(ctx) {
    if (!inStartPre(ctx)) return null;
    const wait = startPreWait(ctx);
    if (!wait.waitsForGpu || wait.contention === null) return null;
    const evidence = [...wait.baseEvidence];
    if (wait.inferred) {
      evidence.push({
        label: "Why GPU memory",
        value: `${formatMiBRounded(wait.ownExitedMiB)} of it is still held by this unit's own exited processes (the ExecStartPre was not seen running nvidia-smi)`,
        source: "gpudeck",
      });
    }
    return waitingForGpu(ctx, wait.contention, wait.deadline, evidence);
  },
};

function waitingForGpu(ctx: DiagnosisContext, c: GpuContention, deadline: number | null, baseEvidence: Evidence[]): Diagnosis {
  const left = deadline === null ? null : deadline - ctx.now;
  const exitedMiB = sumMiB(c.exited);
  const exitedGpus = allGpus(c.exited);
  const exitSince = c.exited.reduce<number | null>((m, g) => (g.exitedAtMs === undefined ? m : m === null ? g.exitedAtMs : Math.min(m, g.exitedAtMs)), null);
  const evidence: Evidence[] = [
    ...baseEvidence,
    ...gpuSampleEvidence(ctx),
    { label: "GPUs", value: describeGpuSet(c), source: "gpudeck" },
    memoryEvidence(c),
    ...[...c.otherUnits, ...c.leftover, ...c.outside, ...c.exited].slice(0, 8).map((g) => holderEvidence(ctx, g)),
  ];
  if (c.unattributed.mib > 0) {
    evidence.push({
      label: "Not attributed",
      value: `${formatMiBRounded(c.unattributed.mib)} on ${formatGpus(c.unattributed.gpus)}: in use, no process listed`,
      source: "nvidia-smi",
    });
  }
  // Memory that frees by itself (exited + unattributed on those GPUs) drains together.
  // Measured over every GPU those processes held memory on, not only the ones still held: with
  // one process per GPU the GPUs free one after another, and the ones already free are progress.
  const drainGpus = [
    ...exitedGpus,
    ...gpusHeldBy([...ctx.facts.gpuRecent, ctx.facts.gpuNow], c.exited).filter(
      (g) => c.gpus.some((u) => u.uuid === g.uuid) && !exitedGpus.some((e) => e.uuid === g.uuid),
    ),
  ];
  const exitedView = c.exited.length > 0 ? drainView(ctx, drainGpus, exitedMiB + unattributedOn(c, exitedGpus), exitSince) : null;
  if (exitedView) evidence.push(...exitedView.evidence);

  // Memory of exited processes that outweighs what live holders keep is the thing being
  // waited for: live holders that small usually ran alongside this unit before (a sidecar, a
  // notebook) and are not what the ExecStartPre's threshold trips on.
  const liveHeldMiB = sumMiB(c.otherUnits) + sumMiB(c.leftover) + sumMiB(c.outside);
  const exitedDominates = exitedView !== null && exitedMiB >= liveHeldMiB;
  const blockers = exitedDominates ? null : c.otherUnits.length > 0 ? "unit" : c.leftover.length > 0 ? "leftover" : c.outside.length > 0 ? "outside" : null;
  const timeoutEta = left !== null && left >= 0 ? left : undefined;
  const alsoExited = exitedView ? `; another ${formatMiBRounded(exitedMiB)} is held by ${exitedHoldersPhrase(ctx, c.exited)}, ${exitedView.clause}` : "";

  if (blockers === "unit") {
    const byUnit = new Map<string, HolderGroup[]>();
    for (const g of c.otherUnits) byUnit.set(g.unit ?? "?", [...(byUnit.get(g.unit ?? "?") ?? []), g]);
    const units = [...byUnit.entries()].sort((a, b) => sumMiB(b[1]) - sumMiB(a[1]));
    const first = units[0];
    const held =
      units.length === 1
        ? `${formatMiBRounded(sumMiB(first[1]))} on ${formatGpus(allGpus(first[1]))} is held by running unit ${first[0]} (PID ${pidList(first[1].map((g) => g.pid))})`
        : `${formatMiBRounded(sumMiB(c.otherUnits))} on ${formatGpus(allGpus(c.otherUnits))} is held by running units ${units.map(([name, gs]) => `${name} (${formatMiBRounded(sumMiB(gs))})`).join(" and ")}`;
    return {
      severity: "critical",
      code: "waiting-gpu-unit",
      headline: `Waiting in ExecStartPre for GPU memory: ${held}, which will not be freed until ${units.length === 1 ? "that unit stops" : "those units stop"}${alsoExited}${timeoutClause(ctx, deadline, null)}.`,
      evidence,
      nextStep: {
        text: `Open ${first[0]}: stop it if it should not hold these GPUs, or give the two units different GPUs.`,
        action: { kind: "open-unit", unit: first[0] },
      },
      etaMs: timeoutEta,
    };
  }
  if (blockers === "leftover") {
    const mib = sumMiB(c.leftover);
    const pids = c.leftover.map((g) => g.pid);
    return {
      severity: "critical",
      code: "waiting-gpu-leftover",
      headline: `Waiting in ExecStartPre for GPU memory: ${formatMiBRounded(mib)} on ${formatGpus(allGpus(c.leftover))} is held by ${plural(pids.length, "process", "processes")} (PID ${pidList(pids)}) still running in this unit from an earlier run, so it waits for itself${alsoExited}${timeoutClause(ctx, deadline, null)}.`,
      evidence,
      nextStep: {
        text: `Kill the left-over process${pids.length > 1 ? "es" : ""} (kill -9 ${pids.join(" ")}); KillMode=process or none lets workers outlive a stop.`,
      },
      etaMs: timeoutEta,
    };
  }
  if (blockers === "outside") {
    const g = c.outside[0];
    const more = c.outside.length > 1 ? ` and ${plural(c.outside.length - 1, "other process", "other processes")}` : "";
    const cmd = g.cmdline.length > 0 ? formatCmdline(g.cmdline, 100) : g.processName;
    return {
      severity: "critical",
      code: "waiting-gpu-outside",
      headline: `Waiting in ExecStartPre for GPU memory: ${formatMiBRounded(sumMiB(c.outside))} on ${formatGpus(allGpus(c.outside))} is held by PID ${g.pid} outside any systemd unit (${quote(cmd)})${more}, which will not be freed until it exits${alsoExited}${timeoutClause(ctx, deadline, null)}.`,
      evidence,
      nextStep: {
        text: `Stop PID ${c.outside.map((o) => o.pid).join(", ")} from a shell if ${c.outside.length > 1 ? "they" : "it"} should not hold the GPU; the start then continues.`,
      },
      etaMs: timeoutEta,
    };
  }

  if (exitedView) {
    const eta = exitedView.etaMs;
    const timeout = timeoutClause(ctx, deadline, eta);
    const passed = left !== null && left < 0;
    const makesIt = eta !== null && !passed && (left === null || eta <= left);
    const notFreeing = (exitedView.drain.status === "flat" && !exitedView.tearingDown) || exitedView.drain.status === "growing";
    const severity = makesIt ? "warning" : (exitedView.drain.status === "unknown" || exitedView.tearingDown) && !passed ? "warning" : "critical";
    const unattributed = unattributedOn(c, exitedGpus);
    const amount = formatMiBRounded(exitedMiB + unattributed);
    let next: NextStep;
    if (makesIt) next = { text: `Nothing to do: the start should continue in about ${formatDurationWords(eta ?? 0)}, once the memory is free.` };
    else if (notFreeing)
      next = { text: "The memory is not being released: look for an orphaned or stuck (D-state) worker with `fuser -v /dev/nvidia*` and kill it." };
    else if (eta !== null && left !== null && !passed)
      next = { text: "The start will likely time out first: raise TimeoutStartSec= or wait for the memory to drain, then start again." };
    else next = { text: "Watch the drain; if it does not progress, look for an orphaned worker with `fuser -v /dev/nvidia*`." };
    return {
      severity,
      code: "waiting-gpu-exited",
      headline: `Waiting in ExecStartPre for ${amount} of GPU memory still held by ${exitedHoldersPhrase(ctx, c.exited)} on ${formatGpus(exitedGpus)}; ${exitedView.clause}${timeout}${liveHeldMiB > 0 ? ` (live processes hold another ${formatMiBRounded(liveHeldMiB)} there)` : ""}.`,
      evidence,
      nextStep: next,
      // Only a real drain estimate: a countdown to the timeout here would read as "free in".
      etaMs: eta ?? undefined,
    };
  }

  // Only memory nobody is listed for.
  const view = drainView(ctx, c.unattributed.gpus, c.unattributed.mib, null);
  evidence.push(...view.evidence);
  const makesIt = view.etaMs !== null && (left === null || (left >= 0 && view.etaMs <= left));
  return {
    severity: makesIt ? "warning" : "critical",
    code: "waiting-gpu-unattributed",
    headline: `Waiting in ExecStartPre for GPU memory: ${formatMiBRounded(c.unattributed.mib)} on ${formatGpus(c.unattributed.gpus)} is in use but nvidia-smi lists no process for it (a process in another PID namespace, or a driver-held allocation); ${view.clause}${timeoutClause(ctx, deadline, view.etaMs)}.`,
    evidence,
    nextStep: { text: "Find the holder with `fuser -v /dev/nvidia*` (also inside containers) and stop it." },
    etaMs: view.etaMs ?? undefined,
  };
}

function unattributedOn(c: GpuContention, gpus: readonly GpuRef[]): number {
  const uuids = new Set(gpus.map((g) => g.uuid));
  return c.unattributed.gpus.filter((g) => uuids.has(g.uuid)).reduce((s, g) => s + g.mib, 0);
}

/** "exited process 4121 (vllm-kimi-k25.service, killed 14 s ago)" or "8 exited processes of …". */
function exitedHoldersPhrase(ctx: DiagnosisContext, groups: readonly HolderGroup[]): string {
  const u = ctx.unit;
  const earliest = groups.reduce<number | null>((m, g) => (g.exitedAtMs === undefined ? m : m === null ? g.exitedAtMs : Math.min(m, g.exitedAtMs)), null);
  // "killed" only when this unit's last main process was killed at about that time. systemd
  // resets ExecMainCode/ExecMainExitTimestamp when the next start begins, so while a restart
  // sits in start-pre only the journal's "Main process exited, code=killed" line tells.
  const mainExitLine = findProcessExit(ctx.facts.journal, "main", null, null);
  const mainExit =
    u.execMainExitUsec > 0 && cldName(u.execMainCode) !== null
      ? { killed: u.execMainCode === CLD_KILLED || u.execMainCode === CLD_DUMPED, atMs: u.execMainExitUsec / 1000 }
      : mainExitLine
        ? { killed: mainExitLine.code !== "exited", atMs: mainExitLine.atUsec / 1000 }
        : null;
  const killed =
    groups.every((g) => g.unit === ctx.name) && mainExit !== null && mainExit.killed && earliest !== null && Math.abs(mainExit.atMs - earliest) <= 10_000;
  const verb = killed ? "killed" : "exited";
  const when = earliest !== null ? `${verb} ${ago(ctx, earliest)}` : null;
  const units = [...new Set(groups.map((g) => g.unit ?? "no unit"))];
  if (groups.length === 1) {
    const g = groups[0];
    return `exited process ${g.pid} (${[g.unit ?? "outside any unit", when].filter(Boolean).join(", ")})`;
  }
  const pids = pidList(groups.map((g) => g.pid).sort((a, b) => a - b));
  const of = units.length === 1 && units[0] !== "no unit" ? ` of ${units[0]}` : "";
  const unitList = of ? "" : `${units.join(", ")}; `;
  return `${groups.length} exited processes${of} (${unitList}PIDs ${pids}${when ? `; ${when}` : ""})`;
}

interface DrainView {
  drain: DrainEstimate;
  /** flat, but still within the teardown grace after the exit */
  tearingDown: boolean;
  remainingMiB: number;
  etaMs: number | null;
  clause: string;
  evidence: Evidence[];
}

function drainView(ctx: DiagnosisContext, gpus: readonly GpuRef[], remainingMiB: number, sinceMs: number | null): DrainView {
  const uuids = [...new Set(gpus.map((g) => g.uuid))];
  const samples = [...ctx.facts.gpuRecent, ...(ctx.facts.gpuNow ? [ctx.facts.gpuNow] : [])];
  const drain = estimateDrain(samples, uuids, sinceMs, ctx.now);
  const tearingDown = drain.status === "flat" && sinceMs !== null && ctx.now - sinceMs < DRAIN_TEARDOWN_GRACE_MS;
  const evidence: Evidence[] = [];
  let etaMs: number | null = null;
  let clause: string;
  if (drain.status === "draining" && drain.mibPerSecond !== undefined) {
    etaMs = (remainingMiB / drain.mibPerSecond) * 1000;
    clause = `draining at ${formatRate(drain.mibPerSecond)}, free in ~${formatDurationWords(etaMs)}`;
    evidence.push(
      {
        label: "Drain rate",
        value: `${formatRate(drain.mibPerSecond)} (${Math.round(drain.mibPerSecond)} MiB/s, linear fit over ${drain.points} samples in ${formatDurationWords(drain.spanMs)})`,
        source: "nvidia-smi",
      },
      { label: "Free in", value: `~${formatDurationWords(etaMs)} (at ${formatClock(ctx.now + etaMs)})`, source: "gpudeck" },
    );
  } else if (tearingDown) {
    // Right after an exit the memory sits at its peak while the process tears down.
    clause = `not draining yet (no drop in the ${formatDurationWords(ctx.now - sinceMs)} since the exit; teardown can take several seconds)`;
    evidence.push({
      label: "Drain rate",
      value: `none yet: memory unchanged over ${drain.points} samples in ${formatDurationWords(drain.spanMs)} since the exit`,
      source: "nvidia-smi",
    });
  } else if (drain.status === "flat") {
    clause = `not draining (no drop over the last ${formatDurationWords(drain.spanMs)}), so it may never be freed`;
    evidence.push({
      label: "Drain rate",
      value: `none: memory unchanged over ${drain.points} samples in ${formatDurationWords(drain.spanMs)}`,
      source: "nvidia-smi",
    });
  } else if (drain.status === "growing") {
    clause = `growing, not draining`;
    evidence.push({
      label: "Drain rate",
      value: `memory grew by ${formatRate(-(drain.mibPerSecond ?? 0))} over ${formatDurationWords(drain.spanMs)}`,
      source: "nvidia-smi",
    });
  } else {
    clause = "drain rate not known yet";
    evidence.push({ label: "Drain rate", value: `unknown: ${plural(drain.points, "usable sample")} since the exit`, source: "nvidia-smi" });
  }
  return { drain, tearingDown, remainingMiB, etaMs, clause, evidence };
}
