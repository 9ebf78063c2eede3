/** Results as a Markdown table (pasted into BENCHMARKS.md as printed). */
export type Cell = string | number | null;

function text(c: Cell): string {
  if (c === null) return "–";
  if (typeof c === "number") return Number.isInteger(c) ? String(c) : c.toFixed(1);
  return c;
}

export function table(headers: string[], rows: Cell[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(text))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(cells[0]!), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...cells.slice(1).map(line)].join("\n");
}

export function printTable(headers: string[], rows: Cell[][]): void {
  console.log(table(headers, rows));
  console.log("");
}

/** One line per target: met or missed, with the measured value; the bench's exit code ignores misses. */
export class Targets {
  private readonly lines: string[] = [];
  private missed = 0;

  check(what: string, ok: boolean, measured: string): void {
    if (!ok) this.missed++;
    this.lines.push(`- ${ok ? "met" : "MISSED"}: ${what} (measured ${measured})`);
  }

  print(): void {
    if (this.lines.length === 0) return;
    console.log("targets:");
    for (const l of this.lines) console.log(l);
    console.log(`targets: ${this.lines.length - this.missed} of ${this.lines.length} met`);
  }
}
