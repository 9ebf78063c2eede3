/**
 * The demo's agents as the benches use them: the agents file the demo writes, each agent's open
 * event streams (`gpudeck_agent_event_streams` on its /metrics), and a driver that makes one
 * unit transition happen on every host each second by restarting a unit through the agent API.
 */
import { readFileSync } from "node:fs";
import { createAgentClient, type AgentClient } from "../../server/panel/agentClient";

export interface AgentEntry {
  name: string;
  url: string;
  token: string;
}

export function readAgents(file: string): AgentEntry[] {
  return JSON.parse(readFileSync(file, "utf8")) as AgentEntry[];
}

/** Open events.watch subscriptions the agent reports. */
export async function agentStreams(a: AgentEntry): Promise<number> {
  const res = await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${a.token}` } });
  const m = /^gpudeck_agent_event_streams (\d+)$/m.exec(await res.text());
  if (!m) throw new Error(`no gpudeck_agent_event_streams on ${a.url}/metrics`);
  return Number(m[1]);
}

/** min and max of the agents' open event streams */
/** Streams held on each agent (min–max); an agent too busy to answer /metrics is left out (-1 when none answered). */
export async function streamsRange(agents: AgentEntry[]): Promise<{ min: number; max: number }> {
  const counts = (await Promise.all(agents.map((a) => agentStreams(a).catch(() => null)))).filter((n): n is number => n !== null);
  if (counts.length === 0) return { min: -1, max: -1 };
  return { min: Math.min(...counts), max: Math.max(...counts) };
}

/** Restarts one running unit per host each `periodMs`, round-robin over the host's running units. */
export class TransitionDriver {
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly hosts: { client: AgentClient; units: string[]; next: number }[] = [];
  restarts = 0;
  failures = 0;

  constructor(
    private readonly agents: AgentEntry[],
    private readonly periodMs = 1000,
    /** units never restarted (the incident unit's restart waits for its memory to drain) */
    private readonly skip: RegExp = /kimi/,
  ) {}

  async start(): Promise<void> {
    for (const a of this.agents) {
      const client = createAgentClient({ url: a.url, token: a.token });
      const { units } = await client.units.list.query();
      const running = units.filter((u) => u.activeState === "active" && !this.skip.test(u.name)).map((u) => u.name);
      if (running.length === 0) throw new Error(`host ${a.name} has no running unit to restart`);
      this.hosts.push({ client, units: running, next: 0 });
    }
    this.timer = setInterval(() => {
      for (const h of this.hosts) {
        const name = h.units[h.next++ % h.units.length]!;
        h.client.units.restart.mutate({ name, reason: "bench: a transition a second" }).then(
          () => this.restarts++,
          () => this.failures++,
        );
      }
    }, this.periodMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
