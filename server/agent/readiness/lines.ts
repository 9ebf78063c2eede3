/**
 * One journal message → the log records in it, as the engine meant them. Progress bars (tqdm)
 * rewrite themselves with `\r`, so one journal entry can hold several updates (the last is
 * current), a bar can be glued to the next record, and multi-line records end in `\r`. ANSI
 * colour goes; a tensor-parallel worker's prefix (`(VllmWorker rank=3 pid=…)`, `(Worker_TP3
 * pid=…)`, SGLang's `[… TP3]`) is noted as its rank. Pure.
 */
import { stripVTControlCharacters } from "node:util";

export interface LogRecord {
  text: string;
  /** the TP worker that printed it; null when the line names none (the main process or rank 0's only line) */
  rank: number | null;
}

/** Longer records are cut: patterns need the start of a line, never a megabyte of it. */
const MAX_RECORD = 4000;

const WORKER_PREFIX = /^\((\w+)(?:\s+([^)]*))?\)\s*/;
const SGLANG_RANK = /\bTP(\d+)\]/;

export function recordsOf(message: string): LogRecord[] {
  const out: LogRecord[] = [];
  for (const raw of stripVTControlCharacters(message).split(/\r\n|\r|\n/)) {
    let text = raw.trim();
    if (text === "") continue;
    if (text.length > MAX_RECORD) text = text.slice(0, MAX_RECORD);
    let rank: number | null = null;
    const prefix = WORKER_PREFIX.exec(text);
    if (prefix && /pid=\d+/.test(prefix[2] ?? "")) {
      rank = rankOf(`${prefix[1]} ${prefix[2] ?? ""}`);
      text = text.slice(prefix[0].length);
    } else {
      const tp = SGLANG_RANK.exec(text.slice(0, 80));
      if (tp) rank = Number(tp[1]);
    }
    out.push({ text, rank });
  }
  return out;
}

function rankOf(prefix: string): number | null {
  const m = /\brank=(\d+)/.exec(prefix) ?? /_?TP(\d+)\b/.exec(prefix);
  return m ? Number(m[1]) : null;
}
