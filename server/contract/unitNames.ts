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

// the globs need no zod: the browser imports them from ./unitGlobs (MaintenanceBanner), the servers from here
export { globToRegExp, matchesUnitGlobs, matchesUnitPatterns, parseUnitGlobs, splitHostPattern, unitGlobToRegExp } from "./unitGlobs";
