/** `host.status`: who this agent is and how its backends are. */
import { authedProcedure, router } from "../../trpc";
import type { AgentServices } from "./services";

export function createHostRouter({ hub, unitGlobs }: AgentServices) {
  return router({
    status: authedProcedure.query(() => ({
      bootId: hub.bootId,
      host: hub.hostname,
      simulated: hub.host.kind === "simulator",
      unitGlobs,
      systemd: hub.systemdStatus(),
      telemetry: hub.telemetryStatus(),
    })),
  });
}
