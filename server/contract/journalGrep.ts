/**
 * The journal search's priorities and its `grep` rule, shared by the agent, the panel and the
 * browser (the journal's filters in the URL). No zod, so the unit page does not download zod for
 * them; ./journalSearch re-exports them. Part of the contract: imports nothing.
 */
export const JOURNAL_PRIORITY_NAMES = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"] as const;
export type JournalPriorityName = (typeof JOURNAL_PRIORITY_NAMES)[number];

/** `grep` is at most this long. */
export const JOURNAL_GREP_MAX = 200;
/** `err` → 3, `3` → 3; null when neither. */
export function journalPriorityNumber(p: JournalPriorityName | number | string): number | null {
  if (typeof p === "number") return Number.isInteger(p) && p >= 0 && p <= 7 ? p : null;
  if (/^[0-7]$/.test(p)) return Number(p);
  const i = (JOURNAL_PRIORITY_NAMES as readonly string[]).indexOf(p === "error" ? "err" : p === "warn" ? "warning" : p);
  return i >= 0 ? i : null;
}

/**
 * Why `grep` is refused, or null. A literal or a simple regex: no back-references, no
 * look-around, no nested quantifiers like `(a+)+` (catastrophic backtracking), and it must
 * compile (JavaScript and PCRE2 agree on this subset).
 */
export function grepProblem(grep: string): string | null {
  if (grep.length === 0) return "grep is empty";
  if (grep.length > JOURNAL_GREP_MAX) return `grep is longer than ${JOURNAL_GREP_MAX} characters`;
  if (/[\u0000-\u001f]/.test(grep)) return "grep holds a control character";
  if (/\\[1-9k]/.test(grep)) return "grep may not use back-references";
  if (/\(\?[=!<]/.test(grep)) return "grep may not use look-around";
  if (/\([^()]*[+*}][^()]*\)\s*[+*{]/.test(grep)) return "grep may not repeat a repeated group, e.g. (a+)+";
  try {
    new RegExp(grep, "i");
  } catch (err) {
    return `grep is not a valid regular expression: ${(err as Error).message}`;
  }
  return null;
}
