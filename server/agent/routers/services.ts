/**
 * What the agent's routers are built from: the hub, the allow-list and the shutdown signal, plus
 * the checks every unit procedure makes before anything reaches systemd.
 */
import { TRPCError } from "@trpc/server";
import { matchesUnitGlobs } from "../../contract/unitNames";
import type { Hub } from "../hub/hub";

export interface AgentServices {
  hub: Hub;
  unitGlobs: string[];
  /** Aborted when the agent shuts down: open subscriptions end with a retryable error. */
  shutdown: AbortSignal;
}

/** Refuse anything outside the allow-list before the adapter sees it. */
export function allowedUnit(services: AgentServices, name: string): string {
  const { unitGlobs } = services;
  if (unitGlobs.length === 0) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: "This agent controls no units: set GPUDECK_UNITS (e.g. GPUDECK_UNITS='vllm-*.service').",
    });
  }
  if (!matchesUnitGlobs(name, unitGlobs)) {
    throw new TRPCError({
      code: "FORBIDDEN",
      message: `Unit ${name} is not in this agent's allow-list (GPUDECK_UNITS=${unitGlobs.join(",")}).`,
    });
  }
  return name;
}

/** A retryable error for streams cut by shutdown: a plain return would tell the client to stop for good. */
export function shuttingDown(): TRPCError {
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "agent is shutting down" });
}
