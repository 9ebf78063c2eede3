/**
 * Unit-name validation and the allow-list of unit globs (GPUDECK_UNITS).
 * Every name a caller supplies passes through here before anything touches systemd. Part of
 * the contract: imports nothing else of the project.
 */
import { z } from "zod";

/** systemd's own limit (UNIT_NAME_MAX in src/basic/unit-name.h). */
export const UNIT_NAME_MAX = 255;

const UNIT_SUFFIXES = ["service", "socket", "target", "device", "mount", "automount", "swap", "timer", "path", "slice", "scope"] as const;

// systemd's VALID_CHARS: ASCII letters, digits, ":-_.\" plus "@" for templates.
const UNIT_NAME_RE = /^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]*)?\.([a-z]+)$/;

/** Returns a human-readable reason the name is not acceptable, or null when it is valid. */
export function unitNameProblem(name: string): string | null {
  if (name.length === 0) return "unit name is empty";
  if (name.length > UNIT_NAME_MAX) return `unit name is longer than ${UNIT_NAME_MAX} characters`;
  if (name.startsWith("-")) return "unit name must not start with '-'";
  if (name.startsWith(".")) return "unit name must not start with '.'";
  if (!/^[\x21-\x7e]+$/.test(name)) return "unit name may only contain ASCII letters, digits and :-_.\\@";
  const m = UNIT_NAME_RE.exec(name);
  if (!m) return "unit name may only contain ASCII letters, digits and :-_.\\@ and must end in a unit type (e.g. .service)";
  if (!(UNIT_SUFFIXES as readonly string[]).includes(m[2]!)) return `unknown unit type '.${m[2]}'`;
  if (name.includes("..")) return "unit name must not contain '..'";
  return escapingProblem(name) ?? instanceProblem(m[1]);
}

/** systemd escapes with `\xNN` only (systemd-escape); any other backslash is not one of its names. */
function escapingProblem(name: string): string | null {
  return /\\(?!x[0-9a-fA-F]{2})/.test(name) ? "unit name may contain '\\' only as a systemd escape (\\xNN, e.g. \\x2d for '-')" : null;
}

/**
 * The instance of a template unit (`vllm@<instance>.service`) is what lands in `%i` of the
 * template's command lines, so it is held to more than systemd's characters: it must not start
 * with '-' or '.' (an option, a hidden path) for anyone, admins included; escaped, they are \x2d
 * and \x2e.
 */
function instanceProblem(at: string | undefined): string | null {
  if (at === undefined || at.length <= 1) return null; // no instance, or a template (`foo@.service`)
  const instance = at.slice(1);
  if (instance.startsWith("-")) return "a unit's instance (after '@') must not start with '-' (escape it as \\x2d)";
  if (instance.startsWith(".")) return "a unit's instance (after '@') must not start with '.'";
  return null;
}

export const unitNameSchema = z
  .string()
  .max(UNIT_NAME_MAX + 1) // so an overlong name gets our message, not a generic one
  .superRefine((name, ctx) => {
    const problem = unitNameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Parse GPUDECK_UNITS ("vllm-*.service, tgi-*.service") into a list of globs. */
export function parseUnitGlobs(spec: string | undefined): string[] {
  if (!spec) return [];
  return spec
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Glob with `*` (any run of characters) and `?` (one character); everything else literal. */
export function globToRegExp(glob: string): RegExp {
  let re = "^";
  for (const ch of glob) {
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else re += ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(re + "$");
}

/**
 * A unit glob: like globToRegExp, except that `*` and `?` never match '@'. Templates and their
 * instances are matched only by patterns that say so (`vllm@*.service`, `vllm@.service`): with
 * `vllm-a*` an operator could otherwise start `vllm-a@--anything.service` and choose what lands in
 * the template's `%i`.
 */
export function unitGlobToRegExp(glob: string): RegExp {
  let re = "^";
  for (const ch of glob) {
    if (ch === "*") re += "[^@]*";
    else if (ch === "?") re += "[^@]";
    else re += ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(re + "$");
}

export function matchesUnitGlobs(name: string, globs: readonly string[]): boolean {
  return globs.some((g) => unitGlobToRegExp(g).test(name));
}

/**
 * A permission pattern: `unit-glob` (every host) or `host-glob:unit-glob` (`gpu-a:vllm-*`,
 * `*:vllm-team-a-*`). Host names never contain ':', so the part before the first ':' is a host
 * glob when it looks like one (lower-case letters, digits, '-', '*', '?'); a unit with ':' in its
 * name on every host is written `*:name`.
 */
export function splitHostPattern(pattern: string): { hostGlob: string | null; unitGlob: string } {
  const i = pattern.indexOf(":");
  if (i > 0 && /^[a-z0-9*?-]+$/.test(pattern.slice(0, i))) return { hostGlob: pattern.slice(0, i), unitGlob: pattern.slice(i + 1) };
  return { hostGlob: null, unitGlob: pattern };
}

/** Does any pattern cover `unit` on `host`? host null = "some host" (only host-less and `*:` patterns apply). */
export function matchesUnitPatterns(unit: string, host: string | null, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    const { hostGlob, unitGlob } = splitHostPattern(p);
    if (hostGlob !== null && !(host === null ? hostGlob === "*" : globToRegExp(hostGlob).test(host))) return false;
    return unitGlobToRegExp(unitGlob).test(unit);
  });
}
