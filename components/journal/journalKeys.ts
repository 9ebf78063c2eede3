/**
 * The URL parameters of a journal view (./journalView.ts reads and writes them). Alone in this
 * file so the unit page can ask "does the URL open the journal?" without the journal's code,
 * which comes when the journal is scrolled to (bench/route-js.ts).
 */
export const JOURNAL_KEYS = ["jsince", "juntil", "jlast", "jprio", "jq", "jboot", "jkpci", "jat"] as const;

/** Whether the URL asks for a journal view (a shared link, the timeline's "journal here"): the page opens at the journal. */
export const hasJournalView = (p: URLSearchParams): boolean => JOURNAL_KEYS.some((k) => p.has(k));
