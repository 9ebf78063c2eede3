/**
 * The panel's side of journal search and the unit file (issue 24), merged into `units.*`:
 * - units.journal / units.journalHistogram: journal readers (operators, admins, viewers where
 *   the panel allows it), rate-limited like every expensive query;
 * - units.downloadJournal: the same right, a mutation (POST, never cached), audited with the
 *   filters (never the text);
 * - units.file: the unit file, masked, for anyone who may read journals (it is configuration the
 *   journal also shows); `reveal.unitFile` (./revealRouter.ts) is an admin's audited "show secrets".
 */
import { TRPCError } from "@trpc/server";
import { hostJournalRangeInput, hostJournalSearchInput, hostUnitFileInput } from "../../contract/journalSearch";
import { asActor, audited, callHost, expensiveQueryProcedure, notSignedIn } from "../trpc";

const journalReader = expensiveQueryProcedure.use(({ ctx, next }) => {
  const decision = ctx.services.auth.can(ctx.actor, "journal.view");
  if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
  return next();
});

/** "since … until …, priority err, grep "oom"": the audit row's detail of a download. */
function filterWords(i: { since?: number; until?: number; priority?: string | number; grep?: string; boot?: number | string; kernelPci?: string[] }): string {
  const parts: string[] = [];
  if (i.since !== undefined) parts.push(`since ${new Date(i.since).toISOString()}`);
  if (i.until !== undefined) parts.push(`until ${new Date(i.until).toISOString()}`);
  if (i.priority !== undefined) parts.push(`priority ${i.priority}`);
  if (i.grep !== undefined) parts.push(`grep ${JSON.stringify(i.grep)}`);
  if (i.boot !== undefined) parts.push(`boot ${i.boot}`);
  if (i.kernelPci) parts.push(`kernel lines of ${i.kernelPci.join(", ")}`);
  return parts.join(", ") || "the last hour";
}

const rawText = (v: unknown) => (typeof v === "string" ? v.slice(0, 300) : null);

export const journalPanelProcedures = {
  journal: journalReader
    .input(hostJournalSearchInput)
    .query(({ input: { host, ...input }, ctx }) => callHost(ctx.services, host, (agent) => agent.units.journal.query(input, asActor(ctx.actor)))),
  journalHistogram: journalReader
    .input(hostJournalRangeInput)
    .query(({ input: { host, ...input }, ctx }) => callHost(ctx.services, host, (agent) => agent.units.journalHistogram.query(input, asActor(ctx.actor)))),
  downloadJournal: audited((raw) => ({ action: "journal.download", unit: rawText(raw.name), host: rawText(raw.host) }))
    .input(hostJournalRangeInput)
    .mutation(async ({ input: { host, ...input }, ctx }) => {
      const { actor, panelRequest: req, services } = ctx;
      if (!actor) throw notSignedIn(req);
      const decision = services.auth.can(actor, "journal.view");
      if (!decision.allowed) throw new TRPCError({ code: "FORBIDDEN", message: `Not allowed: ${decision.reason}.` });
      const r = await callHost(services, host, (agent) => agent.units.downloadJournal.query(input, asActor(actor)));
      await services.auth.audit.recordAudit({
        user: actor.user,
        role: actor.role,
        sourceAddr: req.sourceAddr,
        host,
        unit: input.name,
        action: "journal.download",
        reason: null,
        outcome: "ok",
        detail: `${r.lines} lines${r.cut ? " (cut)" : ""}: ${filterWords(input)}`.slice(0, 500),
      });
      ctx.audit.recorded = true;
      return r;
    }),
  /** Masked; an admin's unmasked copy is `reveal.unitFile` (a mutation, audited). */
  file: journalReader
    .input(hostUnitFileInput)
    .query(({ input: { host, name }, ctx }) => callHost(ctx.services, host, (agent) => agent.units.file.query({ name }, asActor(ctx.actor)))),
};
