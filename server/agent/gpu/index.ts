/**
 * GPU telemetry for the agent: the nvidia-smi sampler (GpuAdapter), the /proc reader
 * (ProcAdapter), attribution of GPU memory to processes and units, and the live history.
 */
import type { GpuAdapter } from "../adapter";
import { NvidiaSmiSampler, type NvidiaSmiAdapterOptions } from "./sampler";

export type { NvidiaSmiAdapterOptions } from "./sampler";
export { NvidiaSmiSampler, RoundAssembler } from "./sampler";
export { createProcAdapter } from "./proc";
export { GpuAttributor } from "./attribution";
export type { GpuAttributorOptions } from "./attribution";

/** The real GpuAdapter: one long-lived `nvidia-smi … -lms <interval>` plus compute-apps calls. */
export function createNvidiaSmiAdapter(opts: NvidiaSmiAdapterOptions): GpuAdapter {
  return new NvidiaSmiSampler(opts);
}
