/**
 * Turning D-Bus values as dbus-next delivers them (Variants, BigInts, nested arrays) into
 * plain numbers, strings and our domain types. Pure; no bus access here.
 */
import type { ExecCommand, ExecRun } from "../../contract/types";

/** systemd's USEC_INFINITY (UINT64_MAX) as a JSON-safe number: "no limit". */
export const USEC_INFINITY = Number.MAX_SAFE_INTEGER;
const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

export type PlainProps = Record<string, unknown>;

function isVariant(v: unknown): v is { signature: string; value: unknown } {
  return typeof v === "object" && v !== null && "signature" in v && "value" in v;
}

/** a{sv} → { name: plain value } (one level of Variant unwrapped). */
export function unwrapProps(dict: unknown): PlainProps {
  const out: PlainProps = {};
  if (typeof dict !== "object" || dict === null) return out;
  for (const [k, v] of Object.entries(dict as Record<string, unknown>)) out[k] = isVariant(v) ? v.value : v;
  return out;
}

/** u/i/t/x as a JS number; UINT64_MAX (infinity) → USEC_INFINITY; anything else → fallback. */
export function num(v: unknown, fallback = 0): number {
  if (typeof v === "bigint") {
    if (v === UINT64_MAX) return USEC_INFINITY;
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) return USEC_INFINITY;
    return Number(v);
  }
  if (typeof v === "number" && Number.isFinite(v)) return v;
  return fallback;
}

export function str(v: unknown, fallback = ""): string {
  return typeof v === "string" ? v : fallback;
}

/**
 * ExecStartPre/ExecStart/ExecStopPost: a(sasbttttuii) =
 * (path, argv, ignore_errors, start_realtime, start_monotonic, exit_realtime, exit_monotonic, pid, code, status).
 */
export function parseExecCommands(v: unknown): ExecCommand[] {
  if (!Array.isArray(v)) return [];
  const out: ExecCommand[] = [];
  for (const item of v) {
    if (!Array.isArray(item) || typeof item[0] !== "string") continue;
    const argv = Array.isArray(item[1]) ? item[1].filter((a): a is string => typeof a === "string") : [];
    out.push({ path: item[0], argv, ignoreErrors: item[2] === true });
  }
  return out;
}

/** The same with each command's last run: (…, exit_monotonic, pid, code, status) → ExecRun. */
export function parseExecRuns(v: unknown): ExecRun[] {
  if (!Array.isArray(v)) return [];
  const out: ExecRun[] = [];
  for (const item of v) {
    const [cmd] = parseExecCommands([item]);
    if (!cmd) continue;
    const run = item as unknown[];
    out.push({ ...cmd, startUsec: num(run[3]), exitUsec: num(run[5]), pid: num(run[7]), code: num(run[8]), status: num(run[9]) });
  }
  return out;
}

/** Values of `keys` from an Environment= list ("KEY=value" strings); other variables are never returned. */
export function environmentValues(v: unknown, keys: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(v)) return out;
  for (const item of v) {
    if (typeof item !== "string") continue;
    const eq = item.indexOf("=");
    if (eq > 0 && keys.includes(item.slice(0, eq))) out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** Unit.Job is (uo): (0, "/") when there is none. */
export function parseJobRef(v: unknown): { id: number; path: string } | null {
  if (!Array.isArray(v)) return null;
  const id = num(v[0]);
  return id > 0 && typeof v[1] === "string" ? { id, path: v[1] } : null;
}

/** "/org/freedesktop/systemd1/job/123" → 123 */
export function jobIdFromPath(path: string): number | null {
  const m = /^\/org\/freedesktop\/systemd1\/job\/(\d+)$/.exec(path);
  return m ? Number(m[1]) : null;
}

export interface ExitStatusSet {
  statuses: number[];
  signals: number[];
}

/** RestartPreventExitStatus / RestartForceExitStatus: (aiai) = (exit statuses, signals). */
export function parseExitStatusSet(v: unknown): ExitStatusSet {
  const empty = { statuses: [], signals: [] };
  if (!Array.isArray(v) || v.length < 2) return empty;
  const nums = (a: unknown) => (Array.isArray(a) ? a.map((x) => num(x, NaN)).filter(Number.isFinite) : []);
  return { statuses: nums(v[0]), signals: nums(v[1]) };
}

/** JSON.stringify that survives BigInt (for log lines and debugging). */
export function jsonSafe(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x));
}
