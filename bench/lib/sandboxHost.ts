/**
 * A real GPU host for the benches that need systemd: a sandbox (e2e/sandbox: systemd 252 as PID 1
 * of throw-away namespaces) with the bench's units, the real agent inside it with the fake
 * nvidia-smi (e2e/systemd/agentHarness.ts), and a real panel in the bench's process in front of
 * it (createPanel, a signed-in admin; requests go through its real /api/trpc endpoint, as
 * e2e/fleet/twoHosts.test.ts does). Root only: elsewhere the bench says so and skips.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Sandbox, sandboxSupport } from "../../e2e/sandbox/sandbox";
import { RunningAgent } from "../../e2e/systemd/agentHarness";
import { loadPanelConfig } from "../../server/panel/config";
import { trustPeerHeader } from "../../server/panel/context";
import { createPanel, type Panel } from "../../server/panel/instance";
import { addUser, login } from "../../server/panel/panelTestHarness";

export const BENCH_HOST = "bench-host";

/** True when real systemd can run here; otherwise prints why the bench skips. */
export function sandboxAvailable(what: string): boolean {
  const support = sandboxSupport();
  if (support.ok) return true;
  console.log(`SKIPPED ${what}: the real-systemd sandbox is unavailable here (${support.reason}); run it as root.`);
  return false;
}

export interface BenchHost {
  sb: Sandbox;
  agent: RunningAgent;
  stop(): Promise<void>;
}

/** Boot a sandbox with `units` (file name → unit file) installed, then the agent inside for `glob`. */
export async function bootHost(
  name: string,
  units: Record<string, string>,
  glob: string,
  agentEnv: Record<string, string> = {},
  setup?: (sb: Sandbox) => Promise<void>,
  nodeArgs: string[] = [],
): Promise<BenchHost> {
  const sb = await Sandbox.boot({ name });
  try {
    for (const [file, text] of Object.entries(units)) await sb.writeFile(`/etc/systemd/system/${file}`, text);
    await sb.systemctl(["daemon-reload"]);
    await setup?.(sb);
    const agent = await RunningAgent.start(sb, { units: glob, env: agentEnv, nodeArgs });
    return {
      sb,
      agent,
      stop: async () => {
        await agent.stop().catch(() => undefined);
        await sb.stop();
      },
    };
  } catch (err) {
    await sb.stop().catch(() => undefined);
    throw err;
  }
}

export interface BenchPanel {
  panel: Panel;
  cookie: string;
  close(): Promise<void>;
}

/** A panel (own temp data dir, real SQLite) watching `agent` as BENCH_HOST, with a signed-in admin. */
export async function benchPanel(agent: { url: string; token: string }): Promise<BenchPanel> {
  trustPeerHeader(true);
  const dataDir = mkdtempSync(path.join(tmpdir(), "gpudeck-bench-panel-"));
  // awaited: createPanel (and close) become async with the panel's async data layer
  const panel = await createPanel(
    loadPanelConfig({ GPUDECK_DATA_DIR: dataDir, GPUDECK_AGENT_URL: agent.url, GPUDECK_AGENT_TOKEN: agent.token, GPUDECK_AGENT_NAME: BENCH_HOST }),
    { log: () => {}, refusalAuditPerMinute: 10_000 },
  );
  await addUser(panel, "bench", "admin");
  const cookie = await login(panel, "bench");
  const deadline = Date.now() + 15_000;
  while (panel.fleet.get(BENCH_HOST)?.state !== "connected") {
    if (Date.now() > deadline) throw new Error(`the panel did not connect to the agent: ${panel.fleet.get(BENCH_HOST)?.error ?? "?"}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    panel,
    cookie,
    close: async () => {
      await panel.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
