/**
 * The zod schema of the config file, built from the mapping table (settings.ts) so the two cannot
 * disagree: every table is strict (a misspelt key is an error, with the nearest known key
 * suggested), and each value must have its kind's TOML type. What a value means (a valid
 * listen address, a positive number of days) is checked later by the loader that reads the
 * variable it becomes.
 */
import { z } from "zod";
import { hostsSchema } from "./hosts";
import { HOSTS_KEY, SETTINGS, type SettingKind } from "./settings";

export interface ConfigIssue {
  path: (string | number)[];
  message: string;
}

const KIND_SCHEMAS: Record<SettingKind, () => z.ZodType> = {
  string: () => z.string({ error: "must be text in quotes" }),
  path: () => z.string({ error: 'must be a path in quotes, e.g. "/var/lib/gpudeck"' }).min(1, { error: "must not be empty" }),
  command: () => z.string({ error: 'must be a command name or path in quotes, e.g. "nvidia-smi"' }).min(1, { error: "must not be empty" }),
  number: () => z.number({ error: "must be a number (no quotes)" }),
  boolean: () => z.boolean({ error: "must be true or false (no quotes)" }),
  list: () => z.array(z.string({ error: "each item must be text in quotes" }), { error: 'must be a list in brackets, e.g. ["a", "b"]' }),
  listen: () => z.string({ error: 'must be "HOST:PORT" in quotes, e.g. "127.0.0.1:3000"' }),
  table: () => z.record(z.string(), z.unknown(), { error: "must be a table ([name] or { … })" }),
  tables: () => z.array(z.record(z.string(), z.unknown()), { error: "must be a list of tables: write one [[name]] table each" }),
};

interface Tree {
  [name: string]: Tree | SettingKind;
}

function settingsTree(): Tree {
  const root: Tree = {};
  for (const s of SETTINGS) {
    const parts = s.key.split(".");
    let node = root;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Tree;
    node[parts.at(-1)!] = s.kind;
  }
  return root;
}

const TREE = settingsTree();

function schemaOf(tree: Tree, extra: Record<string, z.ZodType> = {}): z.ZodType {
  const shape: Record<string, z.ZodType> = { ...extra };
  for (const [name, node] of Object.entries(tree)) {
    shape[name] = (typeof node === "string" ? KIND_SCHEMAS[node]() : schemaOf(node)).optional();
  }
  return z.strictObject(shape, { error: "must be a table of keys" });
}

export const configFileSchema = schemaOf(TREE, { [HOSTS_KEY]: hostsSchema.optional() });

export type ConfigFileValues = Record<string, unknown> & { [HOSTS_KEY]?: z.infer<typeof hostsSchema> };

/** Keys allowed at a path of the file ([] = top level), for suggestions. */
export function knownKeysAt(path: readonly (string | number)[]): string[] {
  if (path.length === 0) return [...Object.keys(TREE), HOSTS_KEY];
  if (path[0] === HOSTS_KEY) return path.length === 2 ? ["name", "url", "token_file", "token_env", "token", "ca_file", "fingerprint"] : [];
  let node: Tree | SettingKind | undefined = TREE;
  for (const part of path) node = typeof node === "object" ? node[String(part)] : undefined;
  return typeof node === "object" ? Object.keys(node) : [];
}

/** Validate a parsed document; every problem, each with the path of the key at fault. */
export function validateConfigValues(doc: unknown): { ok: true; values: ConfigFileValues } | { ok: false; issues: ConfigIssue[] } {
  const parsed = configFileSchema.safeParse(doc);
  if (parsed.success) return { ok: true, values: parsed.data as ConfigFileValues };
  const issues: ConfigIssue[] = [];
  for (const issue of parsed.error.issues) {
    const at = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) issues.push({ path: [...at, key], message: unknownKeyMessage(key, knownKeysAt(at)) });
    } else {
      issues.push({ path: at, message: issue.message });
    }
  }
  return { ok: false, issues };
}

function unknownKeyMessage(key: string, known: string[]): string {
  const near = known.map((k) => ({ k, d: editDistance(key, k) })).sort((a, b) => a.d - b.d)[0];
  if (near && near.d <= Math.max(2, Math.floor(key.length / 3))) return `unknown key; did you mean "${near.k}"?`;
  return known.length ? `unknown key; known keys here: ${known.join(", ")}` : "unknown key";
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j]!;
      row[j] = next;
    }
  }
  return row[b.length]!;
}

/** "panel.session.idle_minutes", "hosts[1].url", 'probes."vllm-a.service".engine' (as TOML writes them) */
export function keyText(path: readonly (string | number)[]): string {
  return path
    .map((p, i) => {
      if (typeof p === "number") return `[${p}]`;
      const name = /^[A-Za-z0-9_-]+$/.test(p) ? p : JSON.stringify(p);
      return i === 0 ? name : `.${name}`;
    })
    .join("");
}
