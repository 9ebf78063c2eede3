/**
 * `reveal.unit`: a unit's command lines as systemd and /proc have them, secrets included: the one
 * agent procedure whose output is not redacted (server/trpc.ts). Admins only; the panel offers it
 * as an audited action and never caches it. What is revealed: ExecStartPre/ExecStart/ExecStopPost
 * and the argv of the control, main and cgroup processes; nothing else.
 */
import { TRPCError } from "@trpc/server";
import { unitInput } from "../../contract/schemas";
import { router, unredactedProcedure } from "../../trpc";
import { allowedUnit, type AgentServices } from "./services";
import { unitFileInput } from "../../contract/journalSearch";
import { readUnitFile } from "./journalProcedures";

export function createRevealRouter(services: AgentServices) {
  return router({
    unit: unredactedProcedure.input(unitInput).query(async ({ input, ctx }) => {
      if (ctx.actor.role !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "Only admins can reveal command lines." });
      const name = allowedUnit(services, input.name);
      const d = await services.hub.host.systemd.get(name);
      if (!d) throw new TRPCError({ code: "NOT_FOUND", message: `Unit ${name} is not known to systemd on ${services.hub.hostname}.` });
      return {
        name,
        execStartPre: d.execStartPre,
        execStart: d.execStart,
        execStopPost: d.execStopPost,
        controlProcess: d.controlProcess,
        mainProcess: d.mainProcess,
        processes: d.processes,
      };
    }),
    /** units.file unmasked: the unit file, drop-ins and effective lines with their secrets (EnvironmentFile= contents are never read). */
    unitFile: unredactedProcedure.input(unitFileInput).query(async ({ input, ctx }) => {
      if (ctx.actor.role !== "admin") throw new TRPCError({ code: "FORBIDDEN", message: "Only admins can reveal unit files." });
      return { ...(await readUnitFile(services, allowedUnit(services, input.name))), revealed: true };
    }),
  });
}
