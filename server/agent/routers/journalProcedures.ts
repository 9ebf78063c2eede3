/**
 * `units.journal` (with filters), `units.journalHistogram`, `units.downloadJournal` and
 * `units.file` at the agent: allow-listed units only; output redacted like every agent answer
 * (server/trpc.ts). `reveal.unitFile` (./revealRouter.ts) is the unredacted unit file, admins only.
 */
import { TRPCError } from "@trpc/server";
import { journalRangeInput, journalSearchInput, unitFileInput } from "../../contract/journalSearch";
import { authedProcedure } from "../../trpc";
import { downloadJournal, journalHistogram, searchJournal } from "../journalQueries";
import { allowedUnit, type AgentServices } from "./services";

export async function readUnitFile(services: AgentServices, name: string) {
  const { hub } = services;
  const read = hub.host.systemd.readUnitFile?.bind(hub.host.systemd);
  if (!read) throw new TRPCError({ code: "NOT_IMPLEMENTED", message: "This host's agent cannot read unit files." });
  try {
    const file = await read(name);
    if (!file) throw new TRPCError({ code: "NOT_FOUND", message: `Unit ${name} is not known to systemd on ${hub.hostname}.` });
    return file;
  } catch (err) {
    if (err instanceof TRPCError) throw err;
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: (err as Error).message });
  }
}

export function journalProcedures(services: AgentServices) {
  const { hub } = services;
  const allowed = (name: string) => allowedUnit(services, name);
  return {
    /** The newest `limit` (alias `lines`) lines matching the filters, oldest first. */
    journal: authedProcedure.input(journalSearchInput).query(({ input }) => searchJournal(hub.host.systemd, allowed(input.name), input)),
    /** Lines and errors per minute over the filtered range (bounded; `partial` when cut). */
    journalHistogram: authedProcedure.input(journalRangeInput).query(({ input }) => journalHistogram(hub.host.systemd, allowed(input.name), input)),
    /** The filtered range as text, at most 50,000 lines (the panel audits it). */
    downloadJournal: authedProcedure.input(journalRangeInput).query(({ input }) => downloadJournal(hub.host.systemd, allowed(input.name), input)),
    /** The unit file and its drop-ins as on disk, NeedDaemonReload, the effective ExecStart/Environment (masked). */
    file: authedProcedure.input(unitFileInput).query(({ input }) => readUnitFile(services, allowed(input.name))),
  };
}
