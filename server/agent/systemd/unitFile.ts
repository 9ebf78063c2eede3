/**
 * The unit file and its drop-ins, read-only (`units.file`): systemd's FragmentPath, DropInPaths
 * and NeedDaemonReload over D-Bus, then those files as they are on disk now (bounded in size).
 * The effective ExecStart=/Environment= come from the properties systemd runs with, written in
 * unit-file syntax; EnvironmentFile= is named, its contents are never read. Secrets are masked
 * by the agent's output redaction (contract/redact.ts), which knows unit-file syntax.
 */
import { open } from "node:fs/promises";
import type { UnitFile } from "../../contract/journalSearch";
import { parseExecCommands, type PlainProps } from "./dbusValues";

/** A unit file or drop-in longer than this is not read out. */
export const UNIT_FILE_MAX_BYTES = 256 * 1024;
/** More drop-ins than this are listed, not read. */
const MAX_DROP_INS = 32;

export type TextReader = (path: string) => Promise<string>;

/** Read a whole text file of at most `max` bytes; throws with a sentence otherwise. */
export async function readBoundedText(path: string, max = UNIT_FILE_MAX_BYTES): Promise<string> {
  if (!path.startsWith("/")) throw new Error(`${path} is not an absolute path`);
  const fh = await open(path, "r");
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (st.size > max) throw new Error(`${path} is ${st.size} bytes, more than the ${max} shown`);
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > max) throw new Error(`${path} grew past ${max} bytes while it was read`);
    return buf.subarray(0, bytesRead).toString("utf8");
  } finally {
    await fh.close();
  }
}

/** One argv element as systemd's unit-file syntax writes it: quoted when it holds a space, a quote or a backslash. */
export function unitFileWord(word: string): string {
  if (word !== "" && !/[\s"'\\;]/.test(word)) return word;
  return `"${word.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** ExecStart=, Environment= and EnvironmentFile= lines from the unit's properties. */
export function effectiveLines(p: PlainProps): string[] {
  const out: string[] = [];
  for (const cmd of parseExecCommands(p.ExecStart)) {
    const argv = cmd.argv.length > 0 ? cmd.argv : [cmd.path];
    // argv[0] other than the path: systemd's "@" form
    const at = argv[0] === cmd.path ? "" : `@${unitFileWord(cmd.path)} `;
    out.push(`ExecStart=${cmd.ignoreErrors ? "-" : ""}${at}${argv.map(unitFileWord).join(" ")}`);
  }
  if (Array.isArray(p.Environment)) {
    for (const v of p.Environment) if (typeof v === "string") out.push(`Environment=${unitFileWord(v)}`);
  }
  if (Array.isArray(p.EnvironmentFiles)) {
    for (const f of p.EnvironmentFiles) {
      if (Array.isArray(f) && typeof f[0] === "string") out.push(`EnvironmentFile=${f[1] === true ? "-" : ""}${f[0]}`);
    }
  }
  return out;
}

/** The answer of units.file from the unit's properties and a reader of files (unmasked: the router's output is redacted). */
export async function unitFileFromProps(p: PlainProps, read: TextReader = readBoundedText): Promise<UnitFile> {
  const problems: string[] = [];
  const fragmentPath = typeof p.FragmentPath === "string" ? p.FragmentPath : "";
  const readOne = async (path: string): Promise<string | null> => {
    try {
      return await read(path);
    } catch (err) {
      problems.push(`${path}: ${(err as Error).message}`);
      return null;
    }
  };
  const fragment = fragmentPath ? await readOne(fragmentPath) : null;
  const paths = Array.isArray(p.DropInPaths) ? p.DropInPaths.filter((d): d is string => typeof d === "string") : [];
  const dropIns: UnitFile["dropIns"] = [];
  for (const [i, path] of paths.entries()) {
    if (i >= MAX_DROP_INS) {
      dropIns.push({ path, text: null });
      continue;
    }
    dropIns.push({ path, text: await readOne(path) });
  }
  if (paths.length > MAX_DROP_INS) problems.push(`${paths.length} drop-ins: only the first ${MAX_DROP_INS} are read`);
  return { fragmentPath, fragment, dropIns, needDaemonReload: p.NeedDaemonReload === true, effective: effectiveLines(p), problems };
}
