/**
 * The mapping table stays complete and true: every GPUDECK_* variable the code reads has a key in
 * the config file (or a reason not to), every key names a variable the code knows, and the
 * shipped example documents every key and is itself a valid config for agent and panel.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadAgentConfig } from "../agent/config";
import { loadPanelConfig } from "../panel/config";
import { configAssignments, parseConfigText } from "./configFile";
import { HOSTS_ENV, HOSTS_KEY, NOT_IN_FILE, SETTINGS, envNamesOf } from "./settings";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const EXAMPLE = path.join(ROOT, "deploy/gpudeck.example.toml");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return name === "node_modules" ? [] : sources(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) ? [p] : [];
  });
}

const code = [...sources(path.join(ROOT, "server")), ...sources(path.join(ROOT, "scripts"))].filter(
  (f) => !f.includes(`${path.sep}config${path.sep}settings.ts`),
);
const namesInCode = new Map<string, string>();
for (const file of code) {
  for (const m of readFileSync(file, "utf8").matchAll(/\bGPUDECK_[A-Z0-9_]*[A-Z0-9]\b/g)) {
    if (!namesInCode.has(m[0])) namesInCode.set(m[0], path.relative(ROOT, file));
  }
}
const mapped = new Set([...SETTINGS.flatMap(envNamesOf), HOSTS_ENV]);

describe("the mapping table", () => {
  it("has a key (or a reason not to) for every GPUDECK_* variable in server/ and scripts/", () => {
    const missing = [...namesInCode].filter(([name]) => !mapped.has(name) && !(name in NOT_IN_FILE)).map(([name, file]) => `${name} (${file})`);
    expect(missing, "add a line for each to server/config/settings.ts (SETTINGS, or NOT_IN_FILE with the reason) and to deploy/gpudeck.example.toml").toEqual(
      [],
    );
  });

  it("names only variables the code reads", () => {
    const unknown = [...mapped].filter((name) => name.startsWith("GPUDECK_") && !namesInCode.has(name));
    expect(unknown).toEqual([]);
  });

  it("has each key once, and no key that is a prefix of another", () => {
    const keys = [...SETTINGS.map((s) => s.key), HOSTS_KEY];
    expect(new Set(keys).size).toBe(keys.length);
    for (const k of keys)
      expect(
        keys.filter((o) => o.startsWith(`${k}.`)),
        k,
      ).toEqual([]);
  });
});

describe("deploy/gpudeck.example.toml", () => {
  const text = readFileSync(EXAMPLE, "utf8");

  it("documents every key, in its table (commented out where it has no safe example value)", () => {
    // "[table]" headers and "key =" / "# key =" lines, tracked by the table they are under
    const documented = new Set<string>();
    let table = "";
    for (const line of text.split("\n")) {
      const header = /^#?\s*\[\[?([A-Za-z0-9_."-]+)\]\]?\s*$/.exec(line.trim());
      if (header) {
        table = header[1]!.replace(/"[^"]*"/g, "").replace(/\.$/, "");
        documented.add(table);
        continue;
      }
      const key = /^#?\s?([a-z_][a-z0-9_]*)\s*=/.exec(line.trim());
      if (key) documented.add(table ? `${table}.${key[1]}` : key[1]!);
    }
    const undocumented = [...SETTINGS.map((s) => s.key), HOSTS_KEY].filter((k) => !documented.has(k));
    expect(undocumented).toEqual([]);
  });

  it("names each key's variable beside it", () => {
    for (const s of SETTINGS) for (const name of envNamesOf(s)) expect(text, `${s.key} → ${name}`).toContain(name);
  });

  it("is a valid config file for the agent and the panel as shipped", () => {
    const config = parseConfigText(text, EXAMPLE);
    const tokens = { GPUDECK_AGENT_TOKEN: "a".repeat(43), GPUDECK_TOKEN_GPU_B: "b".repeat(43) };
    const agentEnv: Record<string, string | undefined> = { ...tokens };
    for (const a of configAssignments(config, "agent", agentEnv)) if (!a.overridden) agentEnv[a.env] = a.value;
    expect(loadAgentConfig([], agentEnv)).toMatchObject({ port: 9300, unitGlobs: expect.arrayContaining(["vllm-*.service"]) });
    const panelEnv: Record<string, string | undefined> = { ...tokens };
    const panel = configAssignments(config, "panel", panelEnv);
    expect(panel.map((a) => a.env)).toEqual(
      expect.arrayContaining(["HOSTNAME", "PORT", "GPUDECK_AGENTS_JSON", "GPUDECK_ALERT_RULES", "GPUDECK_ALERT_CHANNELS"]),
    );
    for (const a of panel) if (!a.overridden) panelEnv[a.env] = a.value;
    // the panel's own loader (hosts, alert rules and channels included) accepts it
    const loaded = loadPanelConfig(panelEnv);
    expect(loaded.hosts.map((h) => h.name)).toEqual(["gpu-a", "gpu-b"]);
    expect(loaded.publicUrl).toBe("https://gpudeck.example.com");
  });
});
