/**
 * Where each key of a TOML text is, by line, so a validation error can say "line 12" as well as
 * the key. smol-toml reports lines only for syntax errors; this reads what it needs of TOML's
 * layout on its own: table headers (`[panel.session]`), arrays of tables (`[[hosts]]`, the n-th
 * one is path hosts.<n>), and `key = value` lines with bare, quoted and dotted keys. Lines inside
 * multi-line strings and arrays are not mistaken for keys. A key inside an inline table or an
 * array element is found at the line of the key that holds the value.
 *
 * Run only on text that smol-toml has already parsed, so the syntax is known to be valid.
 */

export type KeyPath = readonly (string | number)[];

/** Line (1-based) of every key and table header, by its path joined with ".". */
export function tomlKeyLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  const arrayCounts = new Map<string, number>();
  let table: (string | number)[] = [];
  const scan = new ValueScanner();
  text.split(/\r?\n/).forEach((raw, i) => {
    const lineNo = i + 1;
    if (scan.inside()) {
      scan.feed(raw);
      return;
    }
    const line = raw.trimStart();
    if (line === "" || line.startsWith("#")) return;
    if (line.startsWith("[[")) {
      const key = readKey(line, 2);
      if (!key) return;
      const name = key.parts.join(".");
      const n = arrayCounts.get(name) ?? 0;
      arrayCounts.set(name, n + 1);
      table = [...key.parts, n];
      record(lines, table, lineNo);
      return;
    }
    if (line.startsWith("[")) {
      const key = readKey(line, 1);
      if (!key) return;
      table = [...key.parts];
      record(lines, table, lineNo);
      return;
    }
    const key = readKey(line, 0);
    if (!key) return;
    const rest = line.slice(key.end).trimStart();
    if (!rest.startsWith("=")) return;
    record(lines, [...table, ...key.parts], lineNo);
    scan.feed(rest.slice(1));
  });
  return lines;
}

/** The line of `path`, or of the nearest enclosing key the text has (null when none). */
export function lineOf(lines: Map<string, number>, path: KeyPath): number | null {
  for (let n = path.length; n > 0; n--) {
    const line = lines.get(path.slice(0, n).join("."));
    if (line !== undefined) return line;
  }
  return null;
}

function record(lines: Map<string, number>, path: readonly (string | number)[], lineNo: number): void {
  // a dotted key also defines its prefixes (a.b = 1 defines a); keep the first place each appears
  for (let n = 1; n <= path.length; n++) {
    const joined = path.slice(0, n).join(".");
    if (!lines.has(joined)) lines.set(joined, lineNo);
  }
}

/** A (dotted) key starting at `from`: its parts and the index after it. */
function readKey(line: string, from: number): { parts: string[]; end: number } | null {
  const parts: string[] = [];
  let i = from;
  for (;;) {
    while (line[i] === " " || line[i] === "\t") i++;
    const ch = line[i];
    if (ch === '"' || ch === "'") {
      const close = findClosingQuote(line, i);
      if (close < 0) return null;
      const body = line.slice(i + 1, close);
      parts.push(ch === '"' ? unescapeBasic(body) : body);
      i = close + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(line.slice(i));
      if (!m) return null;
      parts.push(m[0]);
      i += m[0].length;
    }
    while (line[i] === " " || line[i] === "\t") i++;
    if (line[i] !== ".") return { parts, end: i };
    i++;
  }
}

function findClosingQuote(line: string, open: number): number {
  const quote = line[open];
  for (let i = open + 1; i < line.length; i++) {
    if (quote === '"' && line[i] === "\\") i++;
    else if (line[i] === quote) return i;
  }
  return -1;
}

function unescapeBasic(body: string): string {
  return body.replace(/\\(["\\])/g, "$1");
}

/**
 * Follows a value across lines: open brackets of multi-line arrays and inline tables, and
 * multi-line strings, ignoring brackets inside strings and comments.
 */
class ValueScanner {
  private depth = 0;
  private multiline: '"""' | "'''" | null = null;

  inside(): boolean {
    return this.depth > 0 || this.multiline !== null;
  }

  feed(text: string): void {
    let i = 0;
    while (i < text.length) {
      if (this.multiline) {
        const close = this.findMultilineEnd(text, i, this.multiline);
        if (close < 0) return;
        i = close + 3;
        this.multiline = null;
        continue;
      }
      const ch = text[i]!;
      if (ch === "#") return;
      if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
        this.multiline = text.slice(i, i + 3) as '"""' | "'''";
        i += 3;
      } else if (ch === '"' || ch === "'") {
        const close = findClosingQuote(text, i);
        i = close < 0 ? text.length : close + 1;
      } else {
        if (ch === "[" || ch === "{") this.depth++;
        else if (ch === "]" || ch === "}") this.depth = Math.max(0, this.depth - 1);
        i++;
      }
    }
  }

  private findMultilineEnd(text: string, from: number, delim: string): number {
    for (let i = from; i < text.length; i++) {
      if (delim === '"""' && text[i] === "\\") {
        i++;
        continue;
      }
      // """ may be followed by up to two more quotes that belong to the string
      if (text.startsWith(delim, i)) {
        let end = i;
        while (text[end + 3] === delim[0] && end - i < 2) end++;
        return end;
      }
    }
    return -1;
  }
}
