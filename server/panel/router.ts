/**
 * The panel's tRPC API, called by browsers: the root router only merges one router per area
 * (./routers/). It mirrors the agent's procedure names, checks who may do what on every
 * procedure and subscription, audits every unit action and every refused one, and forwards to
 * the agent with the acting user attached.
 *
 * Public (unauthenticated) procedures: session.me, session.login, session.logout,
 * setup.complete. Everything else needs a signed-in user (or demo mode's demo admin).
 */
import { router } from "../trpc";
import { alertsRouter } from "./routers/alertsRouter";
import { maintenanceRouter } from "./routers/maintenanceRouter";
import { auditRouter } from "./routers/auditRouter";
import { eventsRouter } from "./routers/eventsRouter";
import { gpusRouter } from "./routers/gpusRouter";
import { hostRouter } from "./routers/hostRouter";
import { hostsRouter } from "./routers/hostsRouter";
import { revealRouter } from "./routers/revealRouter";
import { operationsRouter } from "./routers/operationsRouter";
import { pushRouter } from "./routers/pushRouter";
import { sessionRouter } from "./routers/sessionRouter";
import { statusPageRouter } from "./routers/statusPageRouter";
import { setupRouter } from "./routers/setupRouter";
import { tokensRouter } from "./routers/tokensRouter";
import { twoFactorRouter } from "./routers/twoFactorRouter";
import { unitsRouter } from "./routers/unitsRouter";
import { usersRouter } from "./routers/usersRouter";

export const panelRouter = router({
  session: sessionRouter,
  setup: setupRouter,
  host: hostRouter,
  hosts: hostsRouter,
  units: unitsRouter,
  gpus: gpusRouter,
  events: eventsRouter,
  audit: auditRouter,
  users: usersRouter,
  reveal: revealRouter,
  operations: operationsRouter,
  alerts: alertsRouter,
  statusPage: statusPageRouter,
  tokens: tokensRouter,
  push: pushRouter,
  maintenance: maintenanceRouter,
  twoFactor: twoFactorRouter,
});

export type PanelRouter = typeof panelRouter;
