/** Reading what a test step printed, for the failure digest at the end of `npm test`. */

/** vitest's "Unhandled Errors" section (errors outside any test), from what the step printed. */
export function unhandledErrorsOf(text: string): string | null {
  const plain = text.replace(/\u001b\[[0-9;]*m/g, "");
  const at = plain.search(/⎯+ Unhandled (Errors|Error|Rejection) ⎯+/);
  if (at < 0) return null;
  return plain
    .slice(at)
    .split("\n")
    .filter((l) => l.trim())
    .slice(0, 30)
    .map((l) => `       ${l}`)
    .join("\n");
}

/** the last 15 non-blank lines, plain, indented for the digest */
export function lastLines(text: string): string {
  return text
    .replace(/\u001b\[[0-9;]*m/g, "")
    .split("\n")
    .filter((l) => l.trim())
    .slice(-15)
    .map((l) => `       ${l}`)
    .join("\n");
}
