/**
 * `reveal.unit`: an admin asks to see a unit's command lines unmasked (they are redacted for
 * everyone, admins included, wherever else they appear). A mutation (POST: Origin-checked, never
 * cached, never prefetched), admins only, audited with who and which unit, never the secret.
 *
 * UI: a "Reveal" button next to the unit page's command lines, for admins, that shows the result
 * in place until the page is left (no store, no URL).
 */
import { TRPCError } from "@trpc/server";
import { hostUnitInput } from "../../contract/schemas";
import { hostUnitFileInput } from "../../contract/journalSearch";
import { router } from "../../trpc";
import { asActor, audited, callHost, notSignedIn } from "../trpc";

export const revealRouter = router({
  unit: audited((raw) => ({
    action: "unit.reveal",
    unit: typeof raw.name === "string" ? raw.name : null,
    host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  }))
    .input(hostUnitInput)
    .mutation(async ({ input, ctx }) => {
      const { actor, panelRequest: req, services } = ctx;
      if (!actor) throw notSignedIn(req);
      const decision = services.auth.can(actor, "secrets.reveal");
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const revealed = await callHost(services, input.host, (agent) => agent.reveal.unit.query({ name: input.name }, asActor(actor)));
      await services.auth.audit.recordAudit({
        user: actor.user,
        role: actor.role,
        sourceAddr: req.sourceAddr,
        host: input.host,
        unit: input.name,
        action: "unit.reveal",
        reason: null,
        outcome: "ok",
        detail: "revealed its command lines unmasked (ExecStart, ExecStartPre, ExecStopPost, process argv)",
      });
      ctx.audit.recorded = true;
      return { host: input.host, ...revealed };
    }),
  /** The unit file and its drop-ins unmasked (units.file masks them); EnvironmentFile= contents are never read. */
  unitFile: audited((raw) => ({
    action: "unitFile.reveal",
    unit: typeof raw.name === "string" ? raw.name : null,
    host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  }))
    .input(hostUnitFileInput)
    .mutation(async ({ input, ctx }) => {
      const { actor, panelRequest: req, services } = ctx;
      if (!actor) throw notSignedIn(req);
      const decision = services.auth.can(actor, "secrets.reveal");
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const revealed = await callHost(services, input.host, (agent) => agent.reveal.unitFile.query({ name: input.name }, asActor(actor)));
      await services.auth.audit.recordAudit({
        user: actor.user,
        role: actor.role,
        sourceAddr: req.sourceAddr,
        host: input.host,
        unit: input.name,
        action: "unitFile.reveal",
        reason: null,
        outcome: "ok",
        detail: "revealed its unit file, drop-ins and Environment= unmasked",
      });
      ctx.audit.recorded = true;
      return { host: input.host, ...revealed };
    }),
});
