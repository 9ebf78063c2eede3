/**
 * Action acknowledgement on real systemd: a restart of a unit whose ExecStartPre takes 30 s.
 * gpudeck: the time until `units.restart` returns the job id, through the panel's real
 * endpoint (session, role, action guard, audit row, the agent call) and at the agent alone.
 * Baseline in the same run: `systemctl restart`, which blocks until the job is done (and, for
 * completeness, `systemctl --no-block restart`, which returns at once but gives no job id and no
 * progress). Before each call the unit is stopped, so every restart queues a full 30 s job.
 * Target: p95 ≤ 100 ms to the panel's answer.
 *
 *   node --import tsx bench/action-ack.ts [--smoke] [--restarts=30] [--pre-seconds=30]     (root)
 */
import { call } from "../server/panel/panelTestHarness";
import { numberArg, runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { BENCH_HOST, benchPanel, bootHost, sandboxAvailable } from "./lib/sandboxHost";
import { ms, summarize } from "./lib/stats";
import { printTable, Targets } from "./lib/table";

const RESTARTS = numberArg("restarts", 30, 3);
const PRE_S = numberArg("pre-seconds", 30, 2);
const BLOCKING_RUNS = smoke ? 1 : 3;
const UNIT = "bench-slow.service";
const UNIT_FILE = `[Unit]
Description=gpudeck bench: an ExecStartPre of ${PRE_S} s (waiting for GPU memory), then a long-running service
# the bench starts it more often than the default start limit (5 in 10 s) allows
StartLimitIntervalSec=0

[Service]
ExecStartPre=/bin/sleep ${PRE_S}
ExecStart=/bin/sleep infinity
TimeoutStartSec=${PRE_S + 60}
`;

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function main() {
  printHeader(`Action acknowledgement on real systemd: restart of a unit whose ExecStartPre takes ${PRE_S} s`, smoke);
  if (!sandboxAvailable("action acknowledgement")) return;
  const host = await bootHost("bench-ack", { [UNIT]: UNIT_FILE }, "bench-*.service");
  const bp = await benchPanel(host.agent);
  const { sb, agent } = host;
  const panelMs: number[] = [];
  const agentMs: number[] = [];
  const blockingMs: number[] = [];
  const noBlockMs: number[] = [];
  let jobRanMs: number | null = null;
  try {
    const stop = () => sb.systemctl(["stop", UNIT]);
    const inStartPre = async (since: number) => agent.reaches(UNIT, "activating/start-pre", since, 10_000);
    for (let i = 0; i < RESTARTS; i++) {
      await stop();
      let mark = agent.mark();
      const viaPanel = await timed(() =>
        call(bp.panel, "units.restart", { input: { host: BENCH_HOST, name: UNIT, reason: "bench", confirmed: true }, cookie: bp.cookie }),
      );
      const jobId = (viaPanel.value.json?.result?.data as { jobId?: unknown } | undefined)?.jobId;
      if (viaPanel.value.status !== 200 || typeof jobId !== "number")
        throw new Error(`units.restart through the panel: ${viaPanel.value.status} ${viaPanel.value.text}`);
      panelMs.push(viaPanel.ms);
      await inStartPre(mark);
      await stop();
      mark = agent.mark();
      const direct = await timed(() => agent.client.units.restart.mutate({ name: UNIT, reason: "bench" }));
      if (typeof direct.value.jobId !== "number") throw new Error("units.restart at the agent returned no job id");
      agentMs.push(direct.ms);
      await inStartPre(mark);
    }
    // the last job, left to run: how long the operator would have been blocked
    await stop();
    const mark = agent.mark();
    const t0 = performance.now();
    await call(bp.panel, "units.restart", { input: { host: BENCH_HOST, name: UNIT, reason: "bench", confirmed: true }, cookie: bp.cookie });
    await agent.reaches(UNIT, "active/running", mark, (PRE_S + 30) * 1000);
    jobRanMs = performance.now() - t0;
    for (let i = 0; i < BLOCKING_RUNS; i++) {
      await stop();
      const r = await timed(() => sb.systemctl(["restart", UNIT], { timeoutMs: (PRE_S + 60) * 1000 }));
      blockingMs.push(r.ms);
      await stop();
      const nb = await timed(() => sb.systemctl(["--no-block", "restart", UNIT]));
      noBlockMs.push(nb.ms);
    }
    await stop();
  } finally {
    await bp.close();
    await host.stop();
  }

  const rows = [
    ["gpudeck: panel API units.restart → job id", panelMs],
    ["gpudeck: agent API units.restart → job id", agentMs],
    ["baseline: systemctl restart (blocks until done)", blockingMs],
    ["systemctl --no-block restart (no job id, no progress)", noBlockMs],
  ] as const;
  printTable(
    ["how", "n", "p50", "p95", "max"],
    rows.map(([name, xs]) => {
      const s = summarize(xs);
      return [name, s.n, ms(s.p50), ms(s.p95), ms(s.max)];
    }),
  );
  console.log(
    `the job itself (restart → active/running, ExecStartPre=/bin/sleep ${PRE_S}) took ${ms(jobRanMs)}; systemctl runs inside the sandbox through nsenter (a few ms of its time)\n`,
  );
  const panel = summarize(panelMs);
  const targets = new Targets();
  targets.check("panel API answers with the job id: p95 ≤ 100 ms", (panel.p95 ?? Infinity) <= 100, ms(panel.p95));
  targets.print();
}

runMain(main);
