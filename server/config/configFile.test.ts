import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadAgentConfig } from "../agent/config";
import { loadPanelConfig } from "../panel/config";
import { loadHostsFromEnv } from "../panel/fleet/hostsConfig";
import { applyConfigFile, ConfigFileError, configAssignments, explainWithConfig, jsonPathAfter, parseConfigText } from "./configFile";

const TOKEN = "t".repeat(40);

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected an error");
}

function tempConfig(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-config-"));
  const file = path.join(dir, "gpudeck.toml");
  writeFileSync(file, text);
  return file;
}

describe("config file errors name the key and the line", () => {
  it("a syntax error: file, line and column, with the spot shown", () => {
    const msg = errorOf(() => parseConfigText('[agent]\nlisten = "127.0.0.1:9300\n', "/etc/gpudeck/gpudeck.toml"));
    expect(msg).toMatch(/^\/etc\/gpudeck\/gpudeck\.toml:2:\d+: not valid TOML: /);
    expect(msg).toContain('listen = "127.0.0.1:9300');
  });

  it("a value of the wrong type", () => {
    const msg = errorOf(() => parseConfigText('[agent]\n\nunits = "vllm-*.service"\ngpu_interval_ms = "1000"\n', "f.toml"));
    expect(msg).toContain('f.toml:3: agent.units: must be a list in brackets, e.g. ["a", "b"]');
    expect(msg).toContain("f.toml:4: agent.gpu_interval_ms: must be a number (no quotes)");
  });

  it("a misspelt key, with the nearest known one suggested", () => {
    expect(errorOf(() => parseConfigText('[agent]\nlisen = "x"\n', "f.toml"))).toBe('f.toml:2: agent.lisen: unknown key; did you mean "listen"?');
    expect(errorOf(() => parseConfigText("[panel.sesion]\nidle_minutes = 1\n", "f.toml"))).toBe('f.toml:1: panel.sesion: unknown key; did you mean "session"?');
    expect(errorOf(() => parseConfigText("[agnet]\n", "f.toml"))).toMatch(/^f\.toml:1: agnet: unknown key; did you mean "agent"\?/);
  });

  it("a [[hosts]] table: the n-th one's line", () => {
    const text = `[[hosts]]\nname = "gpu-a"\nurl = "http://10.0.0.5:9300"\ntoken_env = "A"\n\n[[hosts]]\nname = "gpu-a"\nurl = "ftp://x"\ntoken_file = "t"\ntoken = "${TOKEN}"\n`;
    const msg = errorOf(() => parseConfigText(text, "f.toml"));
    expect(msg).toContain("f.toml:7: hosts[1].name: ");
    expect(msg).toContain("must be unique");
    expect(msg).toMatch(/f\.toml:8: hosts\[1\]\.url: /);
    expect(msg).toContain("f.toml:10: hosts[1].token: give one of token_file, token_env and token, not token_file and token");
  });

  it("a host without a token, and a short token", () => {
    const msg = errorOf(() =>
      parseConfigText('[[hosts]]\nname = "a"\nurl = "http://x:1"\n[[hosts]]\nname = "b"\nurl = "http://y:1"\ntoken = "short"\n', "f.toml"),
    );
    expect(msg).toContain("f.toml:1: hosts[0]: needs its agent's token");
    expect(msg).toContain("f.toml:7: hosts[1].token: the token is 5 characters long");
  });

  it("a value the mapping cannot turn into a variable", () => {
    const cfg = parseConfigText('[panel]\nlisten = "3000"\n', "f.toml");
    expect(errorOf(() => configAssignments(cfg, "panel", {}))).toBe(
      'f.toml:2: panel.listen: must be "HOST:PORT", e.g. "127.0.0.1:3000" or "[::1]:3000" (got "3000")',
    );
    const list = parseConfigText('[agent]\nunits = ["a,b"]\n', "f.toml");
    expect(errorOf(() => configAssignments(list, "agent", {}))).toContain("f.toml:2: agent.units: list items may not contain commas");
  });

  it("an https agent's ca_file (relative to the file) and fingerprint reach the agents list", () => {
    const cfg = parseConfigText(
      `[[hosts]]\nname = "a"\nurl = "https://a.example:9300"\ntoken = "${TOKEN}"\nca_file = "tls/ca.crt"\nfingerprint = "AB:CD"\n`,
      "/etc/gpudeck/gpudeck.toml",
    );
    const [json] = configAssignments(cfg, "panel", {});
    expect(JSON.parse(json!.value)).toEqual([
      { name: "a", url: "https://a.example:9300", token: TOKEN, caFile: "/etc/gpudeck/tls/ca.crt", fingerprint: "AB:CD" },
    ]);
  });

  it("token_env naming a variable that is not set", () => {
    const cfg = parseConfigText('\n[[hosts]]\nname = "a"\nurl = "http://x:1"\ntoken_env = "GPUDECK_TOKEN_A"\n', "f.toml");
    expect(errorOf(() => configAssignments(cfg, "panel", {}))).toMatch(/^f\.toml:5: hosts\[0\]\.token_env: names GPUDECK_TOKEN_A, which is not set/);
  });

  it("a loader's error on a value from the file is traced to its key and line", () => {
    const file = tempConfig('[agent]\nunits = ["vllm-*.service"]\nlisten = "nowhere"\n');
    const env: Record<string, string | undefined> = {};
    const applied = applyConfigFile(env, "agent", file);
    const loaderError = errorOf(() => loadAgentConfig([], env));
    expect(explainWithConfig(loaderError, applied)).toBe(`${loaderError} (GPUDECK_AGENT_LISTEN comes from agent.listen in ${file}:3)`);
  });

  it("an error a JSON-taking loader reports inside a table points at that key's line", () => {
    expect(jsonPathAfter('GPUDECK_READINESS: "vllm-a.service".probeUrl must point at this host', "GPUDECK_READINESS")).toEqual(["vllm-a.service", "probeUrl"]);
    expect(jsonPathAfter("GPUDECK_ALERT_RULES.stuck-activating.1.afterMinutes: too big", "GPUDECK_ALERT_RULES")).toEqual([
      "stuck-activating",
      1,
      "afterMinutes",
    ]);
    expect(jsonPathAfter("GPUDECK_ALERT_CHANNELS[0].url: not a URL", "GPUDECK_ALERT_CHANNELS")).toEqual([0, "url"]);
    expect(jsonPathAfter("GPUDECK_READINESS_FILE: cannot read it", "GPUDECK_READINESS")).toEqual([]);
    const file = tempConfig(
      '[probes."vllm-a.service"]\nengine = "vllm"\nprobeUrl = "http://10.9.9.9/health"\n\n[[alerts.channels]]\ntype = "webhook"\n\n[[alerts.channels]]\ntype = "slack"\nurl = "x"\n',
    );
    const agent = applyConfigFile({}, "agent", file);
    expect(explainWithConfig('GPUDECK_READINESS: "vllm-a.service".probeUrl must point at this host', agent)).toContain(
      `(GPUDECK_READINESS comes from probes."vllm-a.service".probeUrl in ${file}:3)`,
    );
    const panel = applyConfigFile({}, "panel", file);
    expect(explainWithConfig("GPUDECK_ALERT_CHANNELS[1].url: must be a URL", panel)).toContain(
      `(GPUDECK_ALERT_CHANNELS comes from alerts.channels[1].url in ${file}:10)`,
    );
  });

  it("a missing file says how to fix it", () => {
    expect(errorOf(() => applyConfigFile({}, "agent", "/nonexistent/gpudeck.toml"))).toBe(
      "cannot read the config file /nonexistent/gpudeck.toml (GPUDECK_CONFIG): ENOENT (copy deploy/gpudeck.example.toml there, or unset GPUDECK_CONFIG)",
    );
  });

  it("errors are ConfigFileErrors", () => {
    expect(() => parseConfigText("x = 1", "f.toml")).toThrow(ConfigFileError);
  });
});

describe("the file gives defaults; the environment wins", () => {
  const file = tempConfig(`
[agent]
units = ["vllm-*.service", "tgi-*.service"]
listen = "0.0.0.0:9400"
token_file = "agent.token"
gpu_interval_ms = 500
data_dir = "state"

[panel]
listen = "[::1]:3100"
data_dir = "/var/lib/gpudeck-panel"
operator_may_kill = true
allowed_hosts = ["gpudeck.example", "gpudeck"]

[panel.session]
idle_minutes = 30

[retention]
audit_days = 7

[[hosts]]
name = "gpu-a"
url = "http://127.0.0.1:9300"
token_env = "GPUDECK_AGENT_TOKEN"

[[hosts]]
name = "gpu-b"
url = "http://10.0.0.6:9300/"
token_file = "tokens/gpu-b.token"
insecure_http = true
`);
  const dir = path.dirname(file);

  it("an agent reads [agent] only; relative paths are relative to the file", () => {
    const env: Record<string, string | undefined> = {};
    applyConfigFile(env, "agent", file);
    expect(env).toEqual({
      GPUDECK_UNITS: "vllm-*.service,tgi-*.service",
      GPUDECK_AGENT_LISTEN: "0.0.0.0:9400",
      GPUDECK_AGENT_TOKEN_FILE: path.join(dir, "agent.token"),
      GPUDECK_GPU_INTERVAL_MS: "500",
      GPUDECK_DATA_DIR: path.join(dir, "state"),
    });
    const config = loadAgentConfig([], env);
    expect(config).toMatchObject({ host: "0.0.0.0", port: 9400, unitGlobs: ["vllm-*.service", "tgi-*.service"], gpuIntervalMs: 500 });
  });

  it("a variable in the environment wins, and a token in the environment replaces the file's token_file", () => {
    const env: Record<string, string | undefined> = { GPUDECK_AGENT_LISTEN: "127.0.0.1:9301", GPUDECK_AGENT_TOKEN: TOKEN };
    const applied = applyConfigFile(env, "agent", file)!;
    expect(env.GPUDECK_AGENT_LISTEN).toBe("127.0.0.1:9301");
    expect(env.GPUDECK_AGENT_TOKEN_FILE).toBeUndefined();
    expect(applied.assignments.filter((a) => a.overridden).map((a) => a.key)).toEqual(["agent.listen", "agent.token_file"]);
    expect(() => loadAgentConfig([], env)).not.toThrow(ConfigError);
  });

  it("a panel reads [panel], [retention] and [[hosts]] (tokens from the named variable)", () => {
    const tokensDir = path.join(dir, "tokens");
    mkdirSync(tokensDir, { recursive: true });
    writeFileSync(path.join(tokensDir, "gpu-b.token"), `${"b".repeat(40)}\n`);
    const env: Record<string, string | undefined> = { GPUDECK_AGENT_TOKEN: TOKEN };
    applyConfigFile(env, "panel", file);
    expect(env).toMatchObject({
      HOSTNAME: "::1",
      PORT: "3100",
      GPUDECK_DATA_DIR: "/var/lib/gpudeck-panel",
      GPUDECK_OPERATOR_MAY_KILL: "1",
      GPUDECK_ALLOWED_HOSTS: "gpudeck.example,gpudeck",
      GPUDECK_SESSION_IDLE_MINUTES: "30",
      GPUDECK_AUDIT_RETENTION_DAYS: "7",
    });
    expect(env.GPUDECK_UNITS).toBeUndefined();
    expect(JSON.parse(env.GPUDECK_AGENTS_JSON!)).toEqual([
      { name: "gpu-a", url: "http://127.0.0.1:9300", token: TOKEN },
      { name: "gpu-b", url: "http://10.0.0.6:9300/", tokenFile: path.join(tokensDir, "gpu-b.token"), insecureHttp: true },
    ]);
    const panel = loadPanelConfig(env);
    expect(panel.hosts.map((h) => [h.name, h.url, h.token])).toEqual([
      ["gpu-a", "http://127.0.0.1:9300", TOKEN],
      ["gpu-b", "http://10.0.0.6:9300", "b".repeat(40)],
    ]);
    expect(panel).toMatchObject({ operatorMayKill: true, sessionIdleMs: 30 * 60_000, auditRetentionMs: 7 * 86_400_000 });
  });

  it("agents named by the environment replace [[hosts]] instead of clashing with them", () => {
    const env: Record<string, string | undefined> = { GPUDECK_AGENT_URL: "http://127.0.0.1:9555", GPUDECK_AGENT_TOKEN: TOKEN };
    applyConfigFile(env, "panel", file);
    expect(env.GPUDECK_AGENTS_JSON).toBeUndefined();
    expect(loadPanelConfig(env).hosts.map((h) => h.url)).toEqual(["http://127.0.0.1:9555"]);
  });

  it("the panel refuses [[hosts]] from the file together with an agents file from elsewhere", () => {
    expect(errorOf(() => loadHostsFromEnv({ GPUDECK_AGENTS_JSON: "[]", GPUDECK_AGENTS_FILE: "/etc/gpudeck/agents.json" }, dir))).toContain(
      "set one of GPUDECK_AGENTS_JSON (the config file's [[hosts]]), GPUDECK_AGENTS_FILE and GPUDECK_AGENT_URL",
    );
  });

  it("a process that talks to no agent can leave [[hosts]] out (no tokens needed)", () => {
    const env: Record<string, string | undefined> = {};
    applyConfigFile(env, "panel", file, { hosts: false });
    expect(env.GPUDECK_AGENTS_JSON).toBeUndefined();
    expect(env.GPUDECK_DATA_DIR).toBe("/var/lib/gpudeck-panel");
  });

  it("no GPUDECK_CONFIG, no file: nothing changes", () => {
    const env: Record<string, string | undefined> = { GPUDECK_UNITS: "x.service" };
    expect(applyConfigFile(env, "agent")).toBeNull();
    expect(env).toEqual({ GPUDECK_UNITS: "x.service" });
  });
});
