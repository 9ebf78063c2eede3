/**
 * One panel per server process: config, agent client and router, created on first use and
 * kept on globalThis so Next's module reloading in dev does not open a second agent client.
 */
import { createAgentClient } from "./agentClient";
import { loadPanelConfig, type PanelConfig } from "./config";
import { createPanelRouter, type PanelRouter } from "./router";

export interface Panel {
  config: PanelConfig;
  router: PanelRouter;
  shutdown: AbortController;
}

const KEY = Symbol.for("gpudeck.panel");
type Holder = { [KEY]?: Panel };

export function getPanel(): Panel {
  const g = globalThis as Holder;
  if (!g[KEY]) {
    const config = loadPanelConfig();
    const shutdown = new AbortController();
    const agent = createAgentClient({ url: config.agentUrl, token: config.agentToken });
    g[KEY] = { config, shutdown, router: createPanelRouter({ agent, demo: config.demo, shutdown: shutdown.signal }) };
  }
  return g[KEY]!;
}

/** SIGTERM: end every browser stream with a retryable error so `next start` can exit. */
export function shutdownPanel(): void {
  (globalThis as Holder)[KEY]?.shutdown.abort();
}

/**
 * `next start` waits for every open connection before exiting on SIGTERM, and SSE streams
 * never close by themselves: end them, then exit.
 */
export function installShutdownHooks(): void {
  const stop = () => {
    shutdownPanel();
    setTimeout(() => process.exit(0), 300).unref();
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}
