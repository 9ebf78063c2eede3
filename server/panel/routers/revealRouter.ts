/**
 * `reveal.unit`: an admin asks to see a unit's command lines unmasked (they are redacted for
 * everyone, admins included, wherever else they appear). A mutation (POST: Origin-checked, never
 * cached, never prefetched), admins only, audited with who and which unit, never the secret.
 *
 * UI: a "Reveal" button next to the unit page's command lines, for admins, that shows the result
 * in place until the page is left (no store, no URL).
 */
import { TRPCError } from "@trpc/server";
import type { Actor } from "../../contract/actors";
import type { AgentClient } from "../agentClient";
import { hostUnitInput } from "../../contract/schemas";
import { hostUnitFileInput } from "../../contract/journalSearch";
import { router } from "../../trpc";
import { asActor, audited, callHost, notSignedIn } from "../trpc";

/** Who may, the audit row, the call: the same for every reveal; only what is revealed differs. */
function revealProcedure<I extends typeof hostUnitInput | typeof hostUnitFileInput, R extends object>(
  action: "unit.reveal" | "unitFile.reveal",
  detail: string,
  input: I,
  fetch: (agent: AgentClient, name: string, actor: Actor) => Promise<R>,
) {
  return audited((raw) => ({
    action,
    unit: typeof raw.name === "string" ? raw.name : null,
    host: typeof raw.host === "string" ? raw.host.slice(0, 100) : null,
  }))
    .input(input)
    .mutation(async ({ input, ctx }) => {
      const { host, name } = input as { host: string; name: string };
      const { actor, panelRequest: req, services } = ctx;
      if (!actor) throw notSignedIn(req);
      const decision = services.auth.can(actor, "secrets.reveal");
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const revealed = await callHost(services, host, (agent) => fetch(agent, name, actor));
      await services.auth.audit.recordAudit({
        user: actor.user,
        role: actor.role,
        sourceAddr: req.sourceAddr,
        host,
        unit: name,
        action,
        reason: null,
        outcome: "ok",
        detail,
      });
      ctx.audit.recorded = true;
      return { host, ...revealed };
    });
}

export const revealRouter = router({
  unit: revealProcedure(
    "unit.reveal",
    "revealed its command lines unmasked (ExecStart, ExecStartPre, ExecStopPost, process argv)",
    hostUnitInput,
    (agent, name, actor) => agent.reveal.unit.query({ name }, asActor(actor)),
  ),
  /** The unit file and its drop-ins unmasked (units.file masks them); EnvironmentFile= contents are never read. */
  unitFile: revealProcedure("unitFile.reveal", "revealed its unit file, drop-ins and Environment= unmasked", hostUnitFileInput, (agent, name, actor) =>
    agent.reveal.unitFile.query({ name }, asActor(actor)),
  ),
});
