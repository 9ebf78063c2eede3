/**
 * Input schemas of the GPU-aware operations, the crash-loop brake and the GPU-fault procedures,
 * at the agent and (with `host`) at the panel. All `.strict()`. Part of the contract: imports
 * nothing else of the project.
 */
import { z } from "zod";
import { hostNameSchema } from "./fleet";
import { reasonSchema } from "./schemas";
import { unitNameSchema } from "./unitNames";

/** `<agent boot id>-o<n>` */
export const operationIdSchema = z
  .string()
  .max(64)
  .regex(/^[0-9a-f]{1,32}-o\d{1,9}$/, "operation id must look like 3f9a1c2b7d10-o4");

export const operationInput = z.object({ id: operationIdSchema }).strict();
export const operationListInput = z.object({ unit: unitNameSchema.optional() }).strict().optional();

/** SIGKILL a process holding GPU memory on `unit`'s GPUs, the one `startedAtMs` says (a reused PID is refused). */
export const killHolderInput = z
  .object({
    unit: unitNameSchema,
    pid: z.number().int().min(2).max(4_194_304),
    startedAtMs: z.number().int().nonnegative(),
    reason: reasonSchema,
  })
  .strict();

export const faultsInput = z.object({ sinceMs: z.number().int().nonnegative().optional(), unit: unitNameSchema.optional() }).strict().optional();

/** "Stop the loop": stop + reset-failed. */
export const stopLoopInput = z.object({ name: unitNameSchema, reason: reasonSchema }).strict();

const onHost = { host: hostNameSchema };
export const hostOperationInput = z.object({ id: operationIdSchema, ...onHost }).strict();
export const hostOperationListInput = z.object({ unit: unitNameSchema.optional(), ...onHost }).strict();
export const hostKillHolderInput = killHolderInput.extend(onHost);
export const hostFaultsInput = z.object({ sinceMs: z.number().int().nonnegative().optional(), unit: unitNameSchema.optional(), ...onHost }).strict();
export const hostStopLoopInput = stopLoopInput.extend(onHost);
