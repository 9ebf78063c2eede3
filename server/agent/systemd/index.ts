/**
 * The real systemd adapter (D-Bus). See adapter.ts for how it works and README-level notes.
 */
import type { SystemdAdapter } from "../adapter";
import { createProcAdapter } from "../gpu/proc";
import { DbusSystemdAdapter, type SystemdAdapterOptions } from "./adapter";

export type { SystemdAdapterOptions } from "./adapter";
export { DbusSystemdAdapter } from "./adapter";

export function createSystemdAdapter(opts: SystemdAdapterOptions): SystemdAdapter {
  return new DbusSystemdAdapter(opts, opts.procs ?? createProcAdapter());
}
