/**
 * Readiness beside the hub: one monitor per hub, started by main.ts after the hub (it reads the
 * units the hub knows), found by the routers with `readinessOf(hub)`. A hub without one (tests
 * that do not start it) reports no readiness: the routers then leave the fields out.
 */
import type { ReadinessHub, ReadinessOptions } from "./monitor";
import { ReadinessMonitor } from "./monitor";

export { ReadinessMonitor, isRunPhase, type ReadinessHub, type ReadinessOptions } from "./monitor";
export { loadReadinessConfig, ReadinessConfigError, type ReadinessConfig } from "./config";
export { createHttpEngineProbe } from "./httpEngine";

const byHub = new WeakMap<ReadinessHub, ReadinessMonitor>();

export async function startReadiness(hub: ReadinessHub, opts: ReadinessOptions): Promise<ReadinessMonitor> {
  const existing = byHub.get(hub);
  if (existing) return existing;
  const monitor = new ReadinessMonitor(hub, opts);
  byHub.set(hub, monitor);
  await monitor.start();
  return monitor;
}

export function readinessOf(hub: ReadinessHub): ReadinessMonitor | null {
  return byHub.get(hub) ?? null;
}

export function closeReadiness(hub: ReadinessHub): void {
  byHub.get(hub)?.close();
  byHub.delete(hub);
}
