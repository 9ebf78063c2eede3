/**
 * Runs the real agent (server/agent/main.ts) INSIDE a systemd sandbox, exactly as on a host,
 * and watches it from outside over its HTTP API with the panel's own tRPC client
 * (server/panel/agentClient.ts: httpLink + SSE subscription via the `eventsource` package).
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import { fileURLToPath } from "node:url";
import { FAKE_NVIDIA_SMI_PATH, fakeGpu } from "../fakes/fakeNvidiaSmi";
import type { Sandbox, SandboxProcess } from "../sandbox/sandbox";
import { createAgentClient, type AgentClient } from "../../server/panel/agentClient";
import type { AgentEvent } from "../../server/contract/events";
import type { JobEvent, UnitTransition } from "../../server/contract/types";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** A free TCP port on 127.0.0.1 (the sandbox shares the host's network namespace). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** "active/running" */
export function pairText(p: { activeState: string; subState: string } | null): string {
  return p ? `${p.activeState}/${p.subState}` : "∅";
}

/** One transition as "from → to", with "(cycle)" when tagged as part of a Restart= cycle. */
export function transitionText(t: UnitTransition): string {
  return `${pairText(t.from)} → ${pairText(t.to)}${t.inRestartCycle ? " (cycle)" : ""}`;
}

export class RunningAgent {
  readonly events: AgentEvent[] = [];
  private stderr = "";
  private unsubscribe: (() => void) | null = null;

  private constructor(
    readonly sb: Sandbox,
    readonly proc: SandboxProcess,
    readonly url: string,
    readonly token: string,
    readonly client: AgentClient,
  ) {}

  /** `port` and `token` of an earlier agent make this one its restart (a panel keeps its URL). */
  /** `nodeArgs` go before the script (e.g. `--cpu-prof`, for a bench's profile of the agent). */
  static async start(
    sb: Sandbox,
    opts: { units: string; env?: Record<string, string>; port?: number; token?: string; nodeArgs?: string[] },
  ): Promise<RunningAgent> {
    const port = opts.port ?? (await freePort());
    const token = opts.token ?? randomBytes(24).toString("hex");
    const statePath = "/run/fake-nvidia-smi.json";
    await sb.writeFile(statePath, JSON.stringify({ gpus: [fakeGpu(0)], allocations: [] }));
    const proc = sb.spawn(["node", ...(opts.nodeArgs ?? []), "--import", "tsx", "server/agent/main.ts"], {
      cwd: REPO_ROOT,
      env: {
        GPUDECK_AGENT_LISTEN: `127.0.0.1:${port}`,
        GPUDECK_AGENT_TOKEN: token,
        GPUDECK_UNITS: opts.units,
        GPUDECK_DATA_DIR: "/var/lib/gpudeck-e2e",
        GPUDECK_NVIDIA_SMI: FAKE_NVIDIA_SMI_PATH,
        GPUDECK_GPU_INTERVAL_MS: "1000",
        FAKE_NVIDIA_SMI_STATE: statePath,
        ...opts.env,
      },
    });
    const url = `http://127.0.0.1:${port}`;
    const agent = new RunningAgent(sb, proc, url, token, createAgentClient({ url, token }));
    proc.child.stderr?.setEncoding("utf8");
    proc.child.stderr?.on("data", (d: string) => {
      agent.stderr = (agent.stderr + d).slice(-20_000);
    });
    proc.child.stdout?.resume();
    await agent.waitHealthy(30_000);
    agent.subscribe();
    await agent.waitFor("the first snapshot", () => agent.events.some((e) => e.kind === "snapshot"), 10_000);
    return agent;
  }

  private async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.proc.child.exitCode !== null) throw new Error(`agent exited (${this.proc.child.exitCode}):\n${this.stderr}`);
      try {
        const res = await fetch(`${this.url}/healthz`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`agent not healthy after ${timeoutMs} ms:\n${this.stderr}`);
      await sleep(100);
    }
  }

  private subscribe(): void {
    const sub = this.client.events.watch.subscribe(
      {},
      {
        onData: (d: unknown) => {
          // tracked(id, event) arrives as { id, data }
          const ev = (d && typeof d === "object" && "data" in d ? (d as { data: unknown }).data : d) as AgentEvent;
          this.events.push(ev);
        },
        onError: (err: unknown) => {
          this.stderr += `\n[test] subscription error: ${(err as Error).message}`;
        },
      },
    );
    this.unsubscribe = () => sub.unsubscribe();
  }

  /** Position in the event list, to look only at what happens after it. */
  mark(): number {
    return this.events.length;
  }

  transitions(unit: string, since = 0): UnitTransition[] {
    return this.events
      .slice(since)
      .filter((e): e is Extract<AgentEvent, { kind: "transition" }> => e.kind === "transition" && e.transition.unit === unit)
      .map((e) => e.transition);
  }

  /** Transitions as text, excluding a unit's first observation. */
  sequence(unit: string, since = 0): string[] {
    return this.transitions(unit, since)
      .filter((t) => t.from !== null)
      .map(transitionText);
  }

  jobs(unit: string, since = 0): JobEvent[] {
    return this.events
      .slice(since)
      .filter((e): e is Extract<AgentEvent, { kind: "job" }> => e.kind === "job" && e.job.unit === unit)
      .map((e) => e.job);
  }

  finishedJob(jobId: number): JobEvent | undefined {
    for (const e of this.events) if (e.kind === "job" && e.job.jobId === jobId && e.job.phase === "finished") return e.job;
    return undefined;
  }

  /** The agent's systemd status as of the latest event (snapshot or status). */
  systemdStatus(): string | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i]!;
      if (e.kind === "status" || e.kind === "snapshot") return e.systemd.state;
    }
    return undefined;
  }

  systemdStates(since = 0): string[] {
    const out: string[] = [];
    for (const e of this.events.slice(since)) {
      if (e.kind !== "status") continue;
      if (out.at(-1) !== e.systemd.state) out.push(e.systemd.state);
    }
    return out;
  }

  async waitFor<T>(what: string, probe: () => T | null | undefined | false, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = probe();
      if (v !== null && v !== undefined && v !== false) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${this.debugTail()}`);
      await sleep(25);
    }
  }

  /** Wait for the job's "finished" event and return its result. */
  async jobResult(jobId: number, timeoutMs = 15_000): Promise<string | undefined> {
    const job = await this.waitFor(`job ${jobId} to finish`, () => this.finishedJob(jobId), timeoutMs);
    return job.result;
  }

  /** Wait until the unit's latest transition reaches `pair` (e.g. "active/running"). */
  async reaches(unit: string, pair: string, since = 0, timeoutMs = 15_000): Promise<UnitTransition> {
    return this.waitFor(`${unit} to reach ${pair}`, () => this.transitions(unit, since).find((t) => pairText(t.to) === pair), timeoutMs);
  }

  debugTail(): string {
    const tail = this.events.slice(-25).map((e) => JSON.stringify(e).slice(0, 300));
    return `last events:\n${tail.join("\n")}\nagent stderr (tail):\n${this.stderr.slice(-3000)}`;
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.proc.kill("SIGTERM");
    const timer = setTimeout(() => void this.proc.kill("SIGKILL"), 5000);
    await this.proc.exited;
    clearTimeout(timer);
  }
}
