/**
 * `gpus.killHolder({ unit, pid, startedAtMs })`, admins only: SIGKILL a live process that holds
 * memory on the GPUs of an allowed unit's last run (what a GPU-aware restart refused to start
 * beside). Refused unless, right now, the latest GPU sample lists `pid` as a live holder on one
 * of those GPUs, it is not the unit's own process (that is `units.kill`), it is in no unit or in
 * one this agent may control, and /proc says it is still the process that started at
 * `startedAtMs` (a reused PID is never killed).
 */
import { TRPCError } from "@trpc/server";
import type { Actor } from "../../contract/actors";
import { formatGpus } from "../../contract/format";
import { matchesUnitGlobs } from "../../contract/unitNames";
import { captureLastRun } from "../operations/lastRun";
import { allowedUnit, type AgentServices } from "./services";

export interface KillHolderInput {
  unit: string;
  pid: number;
  startedAtMs: number;
  reason?: string;
}

export async function killHolder(services: AgentServices, input: KillHolderInput, actor: Actor) {
  const { hub } = services;
  if (actor.role !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "Only admins may SIGKILL a process holding GPU memory." });
  const unit = allowedUnit(services, input.unit);
  const sample = hub.gpuNow();
  const run = captureLastRun(unit, sample, hub.gpuHistory.since(Date.now() - 24 * 3600_000));
  const gpus = new Set(run.gpus.map((g) => g.uuid));
  const found = sample?.gpus.flatMap((g) => (gpus.has(g.uuid) ? g.holders.filter((h) => h.pid === input.pid).map((h) => ({ gpu: g, holder: h })) : [])) ?? [];
  const live = found.find((f) => f.holder.kind === "unit" || f.holder.kind === "outside");
  if (!live) {
    throw new TRPCError({
      code: "PRECONDITION_FAILED",
      message: `PID ${input.pid} holds no GPU memory on ${unit}'s GPUs (${formatGpus(run.gpus)}) in the latest sample; nothing was killed.`,
    });
  }
  const owner = live.holder.unit;
  if (owner === unit) throw new TRPCError({ code: "BAD_REQUEST", message: `PID ${input.pid} belongs to ${unit} itself: use its Kill action instead.` });
  if (owner !== null && !matchesUnitGlobs(owner, services.unitGlobs)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `PID ${input.pid} belongs to ${owner}, which this agent may not control (GPUDECK_UNITS); stop it on the host.`,
    });
  }
  const kill = hub.host.procs.killProcess;
  if (!kill) throw new TRPCError({ code: "PRECONDITION_FAILED", message: "This agent cannot signal processes." });
  const outcome = await kill.call(hub.host.procs, input.pid, input.startedAtMs);
  if (!outcome.killed) throw new TRPCError({ code: "CONFLICT", message: `Not killed: ${outcome.reason}.` });
  return {
    killed: true as const,
    pid: input.pid,
    unit: owner,
    cmdline: live.holder.cmdline,
    gpu: { uuid: live.gpu.uuid, index: live.gpu.index },
    usedMiB: live.holder.usedMiBUnknown ? null : live.holder.usedMiB,
  };
}
