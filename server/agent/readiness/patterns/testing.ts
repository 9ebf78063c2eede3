/**
 * Test helpers for the pattern tables: what a journal message means to an engine, and a check
 * that every pattern of a table was exercised by some sample.
 */
import { expect } from "vitest";
import type { EngineKind } from "../../../contract/readiness";
import { ENGINE_PATTERNS, recognise, type Recognised } from "./index";
import { COMMON_PATTERNS } from "./common";

export const ESC = "\u001b";
/** ANSI colour as vLLM and uvicorn print it: "\x1b[32mINFO\x1b[0m" */
export const green = (text: string) => `${ESC}[32m${text}${ESC}[0m`;

const seen = new Map<EngineKind | "common", Set<string>>();

/** The recognised items of one message; records which pattern ids fired. */
export function meaningOf(engine: EngineKind, message: string): Recognised[] {
  const out = recognise(engine, message);
  for (const r of out) {
    const table = ENGINE_PATTERNS[engine].some((p) => p.id === r.id) ? engine : "common";
    let set = seen.get(table);
    if (!set) seen.set(table, (set = new Set()));
    set.add(r.id);
  }
  return out;
}

/** Exactly one pattern fires on the message, the one named. */
export function expectOnly(engine: EngineKind, message: string, id: string): Recognised {
  const out = meaningOf(engine, message);
  expect(out.map((r) => r.id)).toEqual([id]);
  return out[0]!;
}

export function expectNothing(engine: EngineKind, message: string): void {
  expect(meaningOf(engine, message).map((r) => r.id)).toEqual([]);
}

/** Every pattern of the table fired on some sample of this file. */
export function expectAllPatternsCovered(table: EngineKind | "common"): void {
  const ids = (table === "common" ? COMMON_PATTERNS : ENGINE_PATTERNS[table]).map((p) => p.id);
  expect(ids.filter((id) => !seen.get(table)?.has(id))).toEqual([]);
}
