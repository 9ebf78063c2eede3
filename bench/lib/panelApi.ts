/**
 * The panel's server without Next's pages: the same process as server/panel/serve.ts (the fleet
 * hub, the database, `/api/trpc/…` through ./webBridge.ts, `/healthz`), with every page request
 * answered 404. Browser streams and the agent streams never pass through Next (serve.ts bridges
 * the API around it), so for ingest and delivery this is the panel as deployed, without the
 * minutes of `next build` each worktree would need.
 *   node --import tsx bench/lib/panelApi.ts   (PORT, GPUDECK_* as for the panel)
 * Prints "[panel] ready on http://127.0.0.1:PORT".
 */
import { createPanelServer, stopPanelServer } from "../../server/panel/serve";
import { trustPeerHeader } from "../../server/panel/context";
import { getPanel, shutdownPanel } from "../../server/panel/instance";

async function main(): Promise<void> {
  const port = Number(process.env.PORT || 3000);
  trustPeerHeader();
  const panel = await getPanel({ panelUrl: `http://127.0.0.1:${port}`, interactive: false });
  const server = createPanelServer({
    handle: (_req, res) => void res.writeHead(404, { "content-type": "text/plain" }).end("bench panel: no pages\n"),
    panel,
  });
  const stop = () =>
    void stopPanelServer(server, shutdownPanel)
      .then(() => panel.close())
      .finally(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
  console.log(`[panel] ready on http://127.0.0.1:${port}`);
}

main().catch((err: Error) => {
  console.error(`[panel] fatal: ${err.stack ?? err.message}`);
  process.exit(1);
});
