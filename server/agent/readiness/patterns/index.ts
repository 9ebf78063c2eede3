/**
 * Recognising an engine's log lines: every record of a journal message (./lines.ts) against
 * that engine's table and the common one, in the order the records came.
 */
import type { EngineKind } from "../../../contract/readiness";
import { recordsOf, type LogRecord } from "../lines";
import { COMMON_PATTERNS, EXCEPTION_LINE } from "./common";
import { LLAMACPP_PATTERNS } from "./llamacpp";
import { OLLAMA_PATTERNS } from "./ollama";
import { SGLANG_PATTERNS } from "./sglang";
import { TGI_PATTERNS } from "./tgi";
import type { LineMeaning, LinePattern } from "./types";
import { VLLM_PATTERNS } from "./vllm";

export type { LineMeaning } from "./types";

export const ENGINE_PATTERNS: Record<EngineKind, LinePattern[]> = {
  vllm: VLLM_PATTERNS,
  sglang: SGLANG_PATTERNS,
  "llama.cpp": LLAMACPP_PATTERNS,
  ollama: OLLAMA_PATTERNS,
  tgi: TGI_PATTERNS,
};

export interface Recognised {
  /** the pattern's id, or "exception" for a line that may end a traceback */
  id: string;
  meaning: LineMeaning;
  record: LogRecord;
  /** the GPU the line names ("GPU 3 has a total capacity", "on device 1"), else the worker's rank */
  gpu: number | null;
}

/** What a journal message says, record by record (records nothing matches are left out). */
export function recognise(engine: EngineKind, message: string): Recognised[] {
  const out: Recognised[] = [];
  for (const record of recordsOf(message)) {
    let matched = false;
    let engineFailure = false;
    for (const [table, patterns] of [
      ["engine", ENGINE_PATTERNS[engine]],
      ["common", COMMON_PATTERNS],
    ] as const) {
      for (const p of patterns) {
        const m = p.re.exec(record.text);
        if (!m) continue;
        const meaning = p.meaning(m);
        // the engine's own reading of an error beats the generic one ("cudaMalloc failed: out of memory")
        if (table === "common" && meaning.failure && engineFailure) continue;
        if (table === "engine" && meaning.failure) engineFailure = true;
        matched = true;
        out.push({ id: p.id, meaning, record, gpu: gpuOf(record) });
      }
    }
    const ex = matched ? null : EXCEPTION_LINE.exec(record.text);
    if (ex)
      out.push({
        id: "exception",
        meaning: { failure: ex[2] ? `${ex[1]}: ${ex[2].trim()}` : ex[1]!, ...(ex[2]?.trim() ? { quote: ex[2].trim() } : {}), generic: true },
        record,
        gpu: gpuOf(record),
      });
  }
  return out;
}

function gpuOf(record: LogRecord): number | null {
  const m =
    /\bGPU (\d+) has a total capacity/.exec(record.text) ?? /\bon device (?:cuda:)?(\d+)\b/.exec(record.text) ?? /\bdevice=cuda:(\d+)/.exec(record.text);
  return m ? Number(m[1]) : record.rank;
}
