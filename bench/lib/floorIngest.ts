/**
 * The ingest bench's baseline: the least any panel must do with its agents' streams. One
 * process opens each agent's `events.watch` (node:http, the SSE parser of ./sse.ts) and
 * JSON.parses every event, and does nothing else with it.
 *   node --import tsx bench/lib/floorIngest.ts AGENTS_FILE
 * Prints "[floor] N streams open" once every stream answered 200.
 */
import http from "node:http";
import { readAgents } from "./agents";
import { openSse } from "./sse";

const agents = readAgents(process.argv[2]!);
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
let parsed = 0;
const statuses = await Promise.all(
  agents.map(
    (a) =>
      openSse(
        `${a.url}/trpc/events.watch?input=${encodeURIComponent("{}")}`,
        { authorization: `Bearer ${a.token}` },
        (m) => {
          if (m.event === null) {
            JSON.parse(m.data);
            parsed++;
          }
        },
        agent,
      ).status,
  ),
);
const ok = statuses.filter((s) => s === 200).length;
console.log(`[floor] ${ok} streams open`);
setInterval(() => undefined, 60_000);
process.once("SIGTERM", () => {
  console.log(`[floor] parsed ${parsed} events`);
  process.exit(0);
});
