/**
 * The allow-list of unit globs (GPUDECK_UNITS) and permission patterns (`host-glob:unit-glob`).
 * No zod, so the browser can use it without downloading zod (the unit page's banner of a
 * maintenance window); ./unitNames re-exports it. Part of the contract: imports nothing.
 */
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
