/**
 * The gpudeck config file (TOML, named by GPUDECK_CONFIG; `gpudeck` defaults to
 * /etc/gpudeck/gpudeck.toml): read, validated with zod, and turned into GPUDECK_* environment
 * variables for one process (agent or panel). The file gives defaults; a variable already in the
 * environment wins. Each error names the file, the line and the key; an error a loader finds later
 * in a value from the file is traced back to its key and line the same way (explainWithConfig).
 * See settings.ts for the mapping and deploy/gpudeck.example.toml for every key.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { keyText, validateConfigValues, type ConfigFileValues } from "./fileSchema";
import { HostEntryError, hostsToAgentsJson } from "./hosts";
import { lineOf, tomlKeyLines, type KeyPath } from "./keyLines";
import { HOSTS_ENV, HOSTS_KEY, HOSTS_VARS, SETTINGS, envNamesOf, type Role, type Setting } from "./settings";

export type Env = Record<string, string | undefined>;

export class ConfigFileError extends Error {}

export interface ConfigFile {
  file: string;
  values: ConfigFileValues;
  lines: Map<string, number>;
}

/** One variable the file gives a value for. */
export interface Assignment {
  env: string;
  value: string;
  key: string;
  line: number | null;
  /** the environment already has it (or a variable that replaces it): the file's value is not used */
  overridden: boolean;
}

export interface AppliedConfig {
  file: string;
  assignments: Assignment[];
  /** line of each key, for messages */
  lines: Map<string, number>;
}

function where(file: string, line: number | null, key: KeyPath): string {
  return `${file}${line === null ? "" : `:${line}`}: ${keyText(key)}`;
}

/** Parse and validate the file's text; `file` names it in errors. */
export function parseConfigText(text: string, file: string): ConfigFile {
  let doc: unknown;
  try {
    doc = parseToml(text);
  } catch (err) {
    if (err instanceof TomlError) {
      const why = err.message.split("\n")[0]!.replace(/^Invalid TOML document: /, "");
      throw new ConfigFileError(`${file}:${err.line}:${err.column}: not valid TOML: ${why}\n${err.codeblock}`);
    }
    throw err;
  }
  const lines = tomlKeyLines(text);
  const checked = validateConfigValues(doc);
  if (!checked.ok) {
    throw new ConfigFileError(checked.issues.map((i) => `${where(file, lineOf(lines, i.path), i.path)}: ${i.message}`).join("\n"));
  }
  return { file, values: checked.values, lines };
}

export function readConfigFile(file: string): ConfigFile {
  const resolved = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(resolved, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    const hint =
      code === "ENOENT"
        ? " (copy deploy/gpudeck.example.toml there, or unset GPUDECK_CONFIG)"
        : code === "EACCES"
          ? " (the file must be readable by the user the process runs as)"
          : "";
    throw new ConfigFileError(`cannot read the config file ${resolved} (GPUDECK_CONFIG): ${code}${hint}`);
  }
  return parseConfigText(text, resolved);
}

function valueAt(values: ConfigFileValues, key: string): unknown {
  let node: unknown = values;
  for (const part of key.split(".")) node = node && typeof node === "object" ? (node as Record<string, unknown>)[part] : undefined;
  return node;
}

/** The setting's value as variable text(s), or an error message (the key is added by the caller). */
function toEnvText(s: Setting, value: unknown, dir: string): Record<string, string> | string {
  const [name, portName] = envNamesOf(s);
  switch (s.kind) {
    case "path":
      return { [name!]: path.resolve(dir, value as string) };
    case "command":
      return { [name!]: (value as string).includes("/") ? path.resolve(dir, value as string) : (value as string) };
    case "number":
      return { [name!]: String(value) };
    case "boolean":
      return { [name!]: value ? "1" : "0" };
    case "list": {
      const items = (value as string[]).map((v) => v.trim());
      if (items.some((v) => v.includes(","))) return "list items may not contain commas (write each as its own item)";
      return { [name!]: items.join(",") };
    }
    case "listen": {
      const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec((value as string).trim());
      if (!m || Number(m[2]) > 65535) return `must be "HOST:PORT", e.g. "127.0.0.1:3000" or "[::1]:3000" (got "${value as string}")`;
      return { [name!]: m[1]!.replace(/^\[|\]$/g, ""), [portName!]: m[2]! };
    }
    case "table":
    case "tables":
      return { [name!]: JSON.stringify(value) };
    default:
      return { [name!]: value as string };
  }
}

export interface ApplyOptions {
  /** false: leave [[hosts]] out (a process that never talks to agents, e.g. `gpudeck user`, needs no tokens) */
  hosts?: boolean;
}

/** What the file sets for `role`, given the environment `env` it will be merged into. */
export function configAssignments(config: ConfigFile, role: Role, env: Env, opts: ApplyOptions = {}): Assignment[] {
  const dir = path.dirname(config.file);
  const out: Assignment[] = [];
  const fail = (key: KeyPath, message: string): never => {
    throw new ConfigFileError(`${where(config.file, lineOf(config.lines, key), key)}: ${message}`);
  };
  for (const s of SETTINGS) {
    if (s.role !== role) continue;
    const value = valueAt(config.values, s.key);
    if (value === undefined) continue;
    const text = toEnvText(s, value, dir);
    if (typeof text === "string") fail(s.key.split("."), text);
    const overriders = s.overriddenBy ?? envNamesOf(s);
    const overridden = overriders.some((v) => env[v] !== undefined);
    for (const [name, v] of Object.entries(text)) {
      out.push({ env: name, value: v, key: s.key, line: lineOf(config.lines, s.key.split(".")), overridden: overridden || env[name] !== undefined });
    }
  }
  const hosts = config.values[HOSTS_KEY];
  if (role === "panel" && hosts !== undefined && opts.hosts !== false) {
    if (valueAt(config.values, "panel.agents_file") !== undefined) fail([HOSTS_KEY], "give the agents as [[hosts]] or as panel.agents_file, not both");
    const overridden = HOSTS_VARS.some((v) => env[v] !== undefined);
    let json = "";
    if (!overridden) {
      try {
        json = hostsToAgentsJson(hosts, dir, env);
      } catch (err) {
        if (err instanceof HostEntryError) fail([HOSTS_KEY, ...err.path], err.message);
        throw err;
      }
    }
    out.push({ env: HOSTS_ENV, value: json, key: HOSTS_KEY, line: lineOf(config.lines, [HOSTS_KEY]), overridden });
  }
  return out;
}

/**
 * Merge the config file named by `file` (default: env.GPUDECK_CONFIG) into `env` for `role`:
 * only variables the environment does not already have are set. Null when there is no file.
 */
export function applyConfigFile(env: Env, role: Role, file = env.GPUDECK_CONFIG?.trim(), opts: ApplyOptions = {}): AppliedConfig | null {
  if (!file) return null;
  const config = readConfigFile(file);
  const assignments = configAssignments(config, role, env, opts);
  for (const a of assignments) if (!a.overridden) env[a.env] = a.value;
  return { file: config.file, assignments, lines: config.lines };
}

/** Add where a variable named in a loader's error came from, when the config file set it. */
export function explainWithConfig(message: string, applied: AppliedConfig | null): string {
  if (!applied) return message;
  const sources: string[] = [];
  for (const a of applied.assignments) {
    if (a.overridden || !new RegExp(`\\b${a.env}\\b`).test(message)) continue;
    let line = a.line;
    let key = a.key;
    // the agents list names an entry by its position (1-based): point at that [[hosts]] table
    const entry = a.env === HOSTS_ENV ? /entry (\d+)/.exec(message) : null;
    if (entry) {
      key = `${HOSTS_KEY}[${Number(entry[1]) - 1}]`;
      line = lineOf(applied.lines, [HOSTS_KEY, Number(entry[1]) - 1]) ?? line;
    }
    // a loader of JSON text names the place in it after the variable: point at that key
    const inner = jsonPathAfter(message, a.env);
    if (inner.length) {
      const full = [...a.key.split("."), ...inner];
      key = keyText(full);
      line = lineOf(applied.lines, full) ?? line;
    }
    sources.push(`${a.env} comes from ${key} in ${applied.file}${line === null ? "" : `:${line}`}`);
  }
  return sources.length ? `${message} (${[...new Set(sources)].join("; ")})` : message;
}

/**
 * The path into a JSON value a loader's message names right after the variable, in the forms the
 * loaders write: `VAR.rule.0.key`, `VAR[0].url`, `VAR: "unit".key`.
 */
export function jsonPathAfter(message: string, envName: string): (string | number)[] {
  const m = new RegExp(`\\b${envName}((?:\\.[A-Za-z0-9_-]+|\\[\\d+\\])+|: "[^"]+"(?:\\.[A-Za-z0-9_]+)?)`).exec(message);
  if (!m) return [];
  const out: (string | number)[] = [];
  for (const part of m[1]!.matchAll(/\.([A-Za-z0-9_-]+)|\[(\d+)\]|"([^"]+)"/g)) {
    if (part[2] !== undefined) out.push(Number(part[2]));
    else if (part[3] !== undefined) out.push(part[3]);
    else out.push(/^\d+$/.test(part[1]!) ? Number(part[1]) : part[1]!);
  }
  return out;
}

/**
 * For a process's start: apply the file, then run `validate` (the process's own loader) so an
 * error in a value from the file names its key and line. Prints the error and exits 2 on failure.
 */
export function applyConfigFileOrExit(
  env: Env,
  role: Role,
  opts: ApplyOptions & { log: (msg: string) => void; validate?: () => unknown },
): AppliedConfig | null {
  let applied: AppliedConfig | null = null;
  try {
    applied = applyConfigFile(env, role, undefined, opts);
    opts.validate?.();
  } catch (err) {
    if (err instanceof TypeError || err instanceof RangeError) throw err; // a bug, not a setting
    const message = err instanceof ConfigFileError ? err.message : explainWithConfig((err as Error).message, applied);
    opts.log(`configuration error: ${message}`);
    process.exit(2);
  }
  return applied;
}
