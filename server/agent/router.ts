/**
 * The agent's tRPC API: the root router only merges one router per area. Procedure names are a
 * contract other tools use:
 *   host.status, units.list, units.get, units.start|stop|restart|resetFailed|kill,
 *   units.diagnose, units.timeline, units.journal, units.followJournal (subscription),
 *   gpus.list, gpus.history, events.watch (subscription),
 *   units.crashLoop, units.stopLoop, gpus.faults, gpus.killHolder,
 *   operations.get, operations.list, operations.cancel (GPU-aware start/restart).
 */
import { router } from "../trpc";
import { createEventsRouter } from "./routers/eventsRouter";
import { createGpusRouter } from "./routers/gpusRouter";
import { createHostRouter } from "./routers/hostRouter";
import { createRevealRouter } from "./routers/revealRouter";
import { createOperationsRouter } from "./routers/operationsRouter";
import type { AgentServices } from "./routers/services";
import { createUnitsRouter } from "./routers/unitsRouter";

export type AgentRouterDeps = AgentServices;

export function createAgentRouter(services: AgentServices) {
  return router({
    host: createHostRouter(services),
    units: createUnitsRouter(services),
    gpus: createGpusRouter(services),
    events: createEventsRouter(services),
    reveal: createRevealRouter(services),
    operations: createOperationsRouter(services),
  });
}

export type AgentRouter = ReturnType<typeof createAgentRouter>;
