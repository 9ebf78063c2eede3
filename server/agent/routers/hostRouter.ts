/** `host.status`: who this agent is and how its backends are. */
import { authedProcedure, router } from "../../trpc";
import { AGENT_VERSION } from "../version";
import type { AgentServices } from "./services";

export function createHostRouter({ hub, unitGlobs }: AgentServices) {
  return router({
    status: authedProcedure.query(() => ({
      bootId: hub.bootId,
      version: AGENT_VERSION,
      host: hub.hostname,
      simulated: hub.host.kind === "simulator",
      unitGlobs,
      systemd: hub.systemdStatus(),
      telemetry: hub.telemetryStatus(),
    })),
  });
}
