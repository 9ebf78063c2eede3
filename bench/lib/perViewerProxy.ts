/**
 * The fan-out baseline: the panel's design before the fleet hub (commit 6029c3f^), rebuilt as a
 * small server. Every browser stream opens its own `events.watch` subscription on the agent
 * with the panel's agent client (server/panel/agentClient.ts: one EventSource, so one agent
 * connection, per viewer) and re-streams it with the bounded bridge the panel still uses for
 * journals (server/panel/agentStream.ts), as the old `events.watch` did:
 *
 *   agentStream((h) => agent.events.watch.subscribe({ lastEventId }, { ...h, context: { actor } }), signal, where)
 *
 * It serves plain node:http with tRPC's standalone adapter (no Next.js, no session check), which
 * favours the baseline: what it costs is only the per-viewer agent subscription and re-streaming.
 *
 *   node --import tsx bench/lib/perViewerProxy.ts AGENTS_FILE PORT
 * GET /trpc/watch?input={"host":"gpu-a"} (SSE); prints "[proxy] ready on <url>".
 */
import http from "node:http";
import { readFileSync } from "node:fs";
import { tracked, TRPCError } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { z } from "zod";
import type { Actor } from "../../server/contract/actors";
import type { AgentEvent } from "../../server/contract/events";
import { createAgentClient, type AgentClient } from "../../server/panel/agentClient";
import { agentStream } from "../../server/panel/agentStream";
import { publicProcedure, router } from "../../server/trpc";

const [file, portArg] = process.argv.slice(2);
if (!file || !portArg) {
  console.error("usage: node --import tsx bench/lib/perViewerProxy.ts AGENTS_FILE PORT");
  process.exit(2);
}
const hosts = JSON.parse(readFileSync(file, "utf8")) as { name: string; url: string; token: string }[];
const clients = new Map<string, { client: AgentClient; url: string }>(
  hosts.map((h) => [h.name, { client: createAgentClient({ url: h.url, token: h.token }), url: h.url }]),
);
const actor: Actor = { user: "demo", role: "admin", unitPatterns: [] };

const appRouter = router({
  watch: publicProcedure.input(z.object({ host: z.string(), lastEventId: z.string().max(1000).nullish() })).subscription(async function* ({ input, signal }) {
    const target = clients.get(input.host);
    if (!target) throw new TRPCError({ code: "NOT_FOUND", message: `no host ${input.host}` });
    const stream = agentStream<AgentEvent>(
      (h) => target.client.events.watch.subscribe({ lastEventId: input.lastEventId ?? null }, { ...h, context: { actor } }),
      signal!,
      { agentUrl: target.url, tokenSource: file },
    );
    for await (const { id, data } of stream) yield tracked(id, data);
  }),
});

const handler = createHTTPHandler({ router: appRouter, basePath: "/trpc/", createContext: () => ({ actor }) });
const server = http.createServer((req, res) => handler(req, res));
server.listen(Number(portArg), "127.0.0.1", () => console.log(`[proxy] ready on http://127.0.0.1:${portArg}`));
const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
