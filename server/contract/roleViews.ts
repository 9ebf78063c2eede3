/**
 * What a caller without a permission gets instead of the text it protects: the sentences the
 * panel puts in place of journal-sourced text (for callers without journal access) and of a
 * host's connection error (for everyone but admins: it names the agent's address and where the
 * panel's token comes from). Part of the contract: imports nothing else of the project.
 */

/** Stands in for a log line, in evidence and as the reason a line is missing. */
export const JOURNAL_HIDDEN = "hidden: log lines need the journal permission (operators and admins; viewers where the panel sets GPUDECK_VIEWER_JOURNAL=1)";

/** Stands in for an engine's own words quoted inside a sentence (an exception's message). */
export const QUOTE_HIDDEN = "[the engine's message: hidden, log text needs the journal permission]";

/** `text` with each of `quotes` (log text inside it) replaced by QUOTE_HIDDEN. */
export function withoutQuotes(text: string, quotes: readonly string[]): string {
  let out = text;
  for (const q of quotes) if (q) out = out.split(q).join(QUOTE_HIDDEN);
  return out;
}

/** The label of the one evidence row that stands in for a diagnosis's hidden log lines. */
export const JOURNAL_HIDDEN_LABEL = "Log lines";

/** A host's connection error as non-admins read it: what is wrong, never where the agent is or its token file. */
export function hostErrorForViewers(error: string): string {
  const what = /refused the panel's bearer token/.test(error)
    ? "the agent refused the panel's token"
    : /could not be reached/.test(error)
      ? "the agent could not be reached"
      : "the panel has no working connection to this host's agent";
  return `${what}; an admin sees the details (the agent's address, the token's source) on the Hosts page`;
}

/** Where a panel error names an agent's URL (and token file): "the agent at <url> could not be reached …". */
const AGENT_ERROR = /\bthe agent at \S+ (?:refused the panel's bearer token|could not be reached)/;

/** An error message as `role` may read it: in full for admins, else without the agent's address and token file. */
export function agentErrorForRole(message: string, role: string | null): string {
  return role === "admin" || !AGENT_ERROR.test(message) ? message : hostErrorForViewers(message);
}
