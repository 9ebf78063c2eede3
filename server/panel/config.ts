/**
 * Panel configuration (environment):
 *   GPUDECK_AGENT_URL    the agent's base URL (default http://127.0.0.1:9300)
 *   GPUDECK_AGENT_TOKEN  its bearer token (default: read <data dir>/agent-token, as the local agent writes it)
 *   GPUDECK_DATA_DIR     panel database and token file (default ./.data)
 *   GPUDECK_DEMO=1       demo mode: no login, a visible banner (set by `npm run demo`)
 *   GPUDECK_ALLOWED_ORIGINS  extra origins allowed to call mutations/subscriptions (comma-separated)
 */
import { readFileSync } from "node:fs";
import path from "node:path";

export interface PanelConfig {
  agentUrl: string;
  agentToken: string | null;
  agentTokenSource: string;
  dataDir: string;
  demo: boolean;
  allowedOrigins: string[];
}

export function loadPanelConfig(env: NodeJS.ProcessEnv = process.env): PanelConfig {
  const dataDir = path.resolve(/*turbopackIgnore: true*/ env.GPUDECK_DATA_DIR ?? ".data");
  let agentToken = env.GPUDECK_AGENT_TOKEN?.trim() || null;
  let agentTokenSource = "GPUDECK_AGENT_TOKEN";
  if (!agentToken) {
    const file = path.join(/*turbopackIgnore: true*/ dataDir, "agent-token");
    agentTokenSource = file;
    try {
      agentToken = readFileSync(file, "utf8").trim() || null;
    } catch {
      agentToken = null;
    }
  }
  return {
    agentUrl: (env.GPUDECK_AGENT_URL ?? "http://127.0.0.1:9300").replace(/\/+$/, ""),
    agentToken,
    agentTokenSource,
    dataDir,
    demo: /^(1|true|yes)$/i.test(env.GPUDECK_DEMO ?? ""),
    allowedOrigins: (env.GPUDECK_ALLOWED_ORIGINS ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  };
}
