/** `audit.list`: the audit log, newest first, keyset-paged (`cursor` = `nextCursor` of the previous page). */
import { TRPCError } from "@trpc/server";
import { can } from "../../auth/authorize";
import { auditFilterInput } from "../../contract/schemas";
import { router } from "../../trpc";
import { signedInProcedure } from "../trpc";

export const auditRouter = router({
  list: signedInProcedure.input(auditFilterInput).query(async ({ input, ctx }) => {
    const { auth, refusals } = ctx.services;
    const decision = can(ctx.actor, "audit.view", undefined, auth.authorization);
    if (!decision.allowed) {
      await refusals.record(ctx.panelRequest, ctx.actor, {
        action: "audit.view",
        unit: null,
        reason: null,
        outcome: "refused",
        detail: decision.reason,
        host: null,
      });
      throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
    }
    const { cursor, limit, direction: _direction, ...filters } = input;
    const rows = await auth.audit.queryAudit({ ...filters, before: cursor ?? undefined, limit: limit + 1 });
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { rows: page, nextCursor: more ? page[page.length - 1]!.id : null };
  }),
});
