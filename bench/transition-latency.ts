/**
 * Transition latency on real systemd: 200 start/stop cycles of a unit whose ExecStartPre takes
 * 200 ms (a sandbox: systemd 252 as PID 1, the real agent inside, bench/lib/sandboxHost.ts).
 * From systemd's own StateChangeTimestamp (a transition's `atUsec`) to the moment (a) an SSE
 * client of the agent (`events.watch`) and (b) an SSE client of the panel (`events.watch` unit
 * scope, through the panel's real endpoint in this process) receive it: p50 / p95 / max, and
 * how many start-pre states each saw. Baseline in the same run, on the same cycles: a loop
 * inside the sandbox polling `systemctl show -p ActiveState,SubState` once a second (what most
 * tools do): its detection latency (seen − StateChangeTimestampMonotonic) and how many of the
 * start-pre states it never saw. The holds between start and stop are random (200–700 ms), so
 * the cycles do not lock in phase with the 1 s poll. Targets: panel p95 ≤ 50 ms, no start-pre
 * state missed.
 *
 *   node --import tsx bench/transition-latency.ts [--smoke] [--cycles=200]     (root)
 */
import { wireTransformer } from "../server/contract/wire";
import type { AgentEvent } from "../server/contract/events";
import type { PanelEvent } from "../server/contract/fleet";
import { panelRequest } from "../server/panel/panelTestHarness";
import { numberArg, runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { BENCH_HOST, benchPanel, bootHost, sandboxAvailable } from "./lib/sandboxHost";
import { openSse, readSseResponse, type SseMessage } from "./lib/sse";
import { ms, sleep, summarize } from "./lib/stats";
import { printTable, Targets } from "./lib/table";

const CYCLES = numberArg("cycles", 200, 3);
const UNIT = "bench-cycle.service";
const UNIT_FILE = `[Unit]
Description=gpudeck bench: a 200 ms ExecStartPre, then a long-running service
# the bench starts it more often than the default start limit (5 in 10 s) allows
StartLimitIntervalSec=0

[Service]
ExecStartPre=/bin/sleep 0.2
ExecStart=/bin/sleep infinity
`;
const START_PRE = "activating/start-pre";

interface Seen {
  key: string;
  to: string;
  latencyMs: number;
}

/** Transitions of UNIT in a stream of agent or panel events, with their latency. */
function collector(into: Seen[]) {
  return (m: SseMessage) => {
    let event: AgentEvent | PanelEvent;
    try {
      event = wireTransformer.deserialize(JSON.parse(m.data)) as AgentEvent | PanelEvent;
    } catch {
      return;
    }
    if (event.kind !== "transition" || event.transition.unit !== UNIT || event.transition.from === null) return;
    const t = event.transition;
    const to = `${t.to.activeState}/${t.to.subState}`;
    into.push({ key: `${t.atUsec}|${to}`, to, latencyMs: m.receivedMs - t.atUsec / 1000 });
  };
}

/** Parses the polling loop's output: "@@" starts a poll, then systemctl's KEY=value lines. */
function pollParser(into: { state: string; changeMonoUs: number; seenMonoUs: number }[]) {
  let buf = "";
  let cur: Record<string, string> = {};
  const flush = () => {
    if (cur.ActiveState && cur.SubState && cur.StateChangeTimestampMonotonic) {
      into.push({ state: `${cur.ActiveState}/${cur.SubState}`, changeMonoUs: Number(cur.StateChangeTimestampMonotonic), seenMonoUs: Number(cur.seen) });
    }
    cur = {};
  };
  return (chunk: string) => {
    const seen = String(process.hrtime.bigint() / 1000n); // CLOCK_MONOTONIC, systemd's *Monotonic clock
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line === "@@") flush();
      const eq = line.indexOf("=");
      if (eq > 0) cur[line.slice(0, eq)] = line.slice(eq + 1);
      cur.seen = seen;
      if (cur.ActiveState && cur.SubState && cur.StateChangeTimestampMonotonic) flush();
    }
  };
}

async function main() {
  printHeader("Transition latency on real systemd: systemd → agent → panel → browser, vs polling systemctl once a second", smoke);
  if (!sandboxAvailable("transition latency")) return;
  const host = await bootHost("bench-tl", { [UNIT]: UNIT_FILE }, "bench-*.service");
  const bp = await benchPanel(host.agent);
  const agentSeen: Seen[] = [];
  const panelSeen: Seen[] = [];
  const polls: { state: string; changeMonoUs: number; seenMonoUs: number }[] = [];
  const agentSse = openSse(`${host.agent.url}/trpc/events.watch`, { authorization: `Bearer ${host.agent.token}` }, collector(agentSeen));
  const res = await bp.panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "unit", host: BENCH_HOST, name: UNIT }, cookie: bp.cookie }));
  if (res.status !== 200) throw new Error(`the panel's events.watch answered ${res.status}`);
  const panelSse = readSseResponse(res, collector(panelSeen));
  const poll = host.sb.spawn([
    "/bin/bash",
    "-c",
    `while :; do echo @@; systemctl show -p ActiveState,SubState,StateChangeTimestampMonotonic ${UNIT}; sleep 1; done`,
  ]);
  poll.child.stdout!.setEncoding("utf8");
  poll.child.stdout!.on("data", pollParser(polls));
  let cyclesFromMonoUs = 0;
  let seed = 42;
  const hold = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return 200 + (seed % 500);
  };
  try {
    if ((await agentSse.status) !== 200) throw new Error("the agent's events.watch refused the bench");
    await sleep(1500);
    cyclesFromMonoUs = Number(process.hrtime.bigint() / 1000n);
    const t0 = Date.now();
    for (let i = 0; i < CYCLES; i++) {
      await host.sb.systemctl(["start", UNIT]);
      await sleep(hold());
      await host.sb.systemctl(["stop", UNIT]);
      await sleep(hold());
      if (!smoke && (i + 1) % 50 === 0) console.log(`  ${i + 1}/${CYCLES} cycles (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
    }
    await sleep(2500);
  } finally {
    await poll.kill("SIGKILL").catch(() => undefined);
    agentSse.close();
    panelSse.close();
    await bp.close();
    await host.stop();
  }

  const startPres = (list: Seen[]) => new Set(list.filter((s) => s.to === START_PRE).map((s) => s.key)).size;
  // the baseline: each state episode (its StateChangeTimestampMonotonic) as first seen by a poll
  const firstSeen = new Map<string, number>();
  for (const p of polls) {
    if (p.changeMonoUs < cyclesFromMonoUs) continue; // the state the unit was in before the cycles
    const key = `${p.changeMonoUs}|${p.state}`;
    if (!firstSeen.has(key)) firstSeen.set(key, (p.seenMonoUs - p.changeMonoUs) / 1000);
  }
  const pollStartPre = [...firstSeen.keys()].filter((k) => k.endsWith(`|${START_PRE}`)).length;
  const agent = summarize(agentSeen.map((s) => s.latencyMs));
  const panel = summarize(panelSeen.map((s) => s.latencyMs));
  const polled = summarize([...firstSeen.values()]);
  const agentStartPre = startPres(agentSeen);
  const panelStartPre = startPres(panelSeen);
  console.log(`${CYCLES} start/stop cycles of ${UNIT} (ExecStartPre=/bin/sleep 0.2); ${agentSeen.length} transitions reached the agent's client\n`);
  printTable(
    ["observer", "transitions seen", `start-pre seen (of ${CYCLES})`, "p50", "p95", "max"],
    [
      ["agent SSE client (events.watch)", agent.n, agentStartPre, ms(agent.p50), ms(agent.p95), ms(agent.max)],
      ["panel SSE client (events.watch, unit)", panel.n, panelStartPre, ms(panel.p50), ms(panel.p95), ms(panel.max)],
      ["baseline: systemctl show every 1 s", polled.n, pollStartPre, ms(polled.p50), ms(polled.p95), ms(polled.max)],
    ],
  );
  console.log(
    "latency: receive time − systemd's StateChangeTimestamp of that state (the baseline: time its poll printed the state − StateChangeTimestampMonotonic); " +
      `the baseline polled ${polls.length} times and missed ${CYCLES - pollStartPre} of ${CYCLES} start-pre states\n`,
  );
  const targets = new Targets();
  targets.check("panel's client: p95 ≤ 50 ms", (panel.p95 ?? Infinity) <= 50, ms(panel.p95));
  targets.check("panel's client: no start-pre state missed", panelStartPre === CYCLES, `${panelStartPre} of ${CYCLES} seen`);
  targets.print();
}

runMain(main);
