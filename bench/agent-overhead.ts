/**
 * Agent overhead on real systemd: 60 s watching 32 units and 8 GPUs at 1 Hz (a sandbox, the
 * real agent inside with the fake nvidia-smi simulating 8 GPUs; each unit holds memory on one
 * GPU). Measured from /proc (the agent and every process it started) and the sandbox's cgroups
 * (systemd, dbus-daemon: what the watching costs them). Baselines in the same run, on the same
 * units and GPUs, with the agent stopped: the naive loop
 *   nvidia-smi --query-gpu=… ; for each unit: systemctl show -p … ; sleep 1
 * and the same with one `systemctl show` for all 32 units. The nvidia-smi here is the fake, a
 * Node script (~40 ms of CPU per start, the real binary 7–20 ms on small hosts, seconds without
 * persistence mode), so its share is shown apart. Target: the agent ≤ 1/5 of the naive loop's CPU.
 *
 *   node --import tsx bench/agent-overhead.ts [--smoke] [--seconds=60] [--units=32] [--cpu-prof=DIR]   (root)
 *
 * --cpu-prof=DIR: run the agent under `node --cpu-prof` and copy its profile to DIR (read it with
 * bench/lib/cpuProfile.ts); the profiler costs CPU itself, so that run's numbers are not the agent's.
 */
import type { Sandbox } from "../e2e/sandbox/sandbox";
import { FAKE_NVIDIA_SMI_PATH, fakeGpu } from "../e2e/fakes/fakeNvidiaSmi";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { numberArg, runMain, smoke } from "./lib/args";
import { printHeader } from "./lib/machine";
import { cgroupCpuSeconds, ownCpuSeconds, PeakSampler, rssBytes, treeCpuSeconds, treeRssBytes } from "./lib/proc";
import { bootHost, sandboxAvailable } from "./lib/sandboxHost";
import { mib, sleep } from "./lib/stats";
import { printTable, Targets, type Cell } from "./lib/table";

const SECONDS = numberArg("seconds", 60, 2);
const UNITS = numberArg("units", 32, 4);
const GPUS = 8;
const WARM_S = smoke ? 1 : 10;
const STATE = "/run/bench-nvidia-smi.json";
const PROF_DIR = process.argv.find((a) => a.startsWith("--cpu-prof="))?.slice("--cpu-prof=".length) ?? null;
const INSIDE_PROF_DIR = "/run/gpudeck-agent-prof";
const names = Array.from({ length: UNITS }, (_, i) => `bench-u${String(i + 1).padStart(2, "0")}.service`);
const unitFile = (i: number) => `[Unit]
Description=gpudeck bench: service ${i + 1}, holding GPU memory on GPU ${i % GPUS}

[Service]
Environment=FAKE_NVIDIA_SMI_STATE=${STATE}
ExecStart=/bin/sh -c '${FAKE_NVIDIA_SMI_PATH} --fake-alloc $$$$ ${i % GPUS} ${4000 + (i % 5) * 1000} python3 && exec /bin/sleep infinity'
`;
const SHOW = "ActiveState,SubState,MainPID,NRestarts,StateChangeTimestamp";
const QUERY = "index,uuid,name,memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw";

interface Phase {
  name: string;
  roundsPerS: number;
  totalS: number;
  smiS: number | null;
  ownS: number | null;
  systemdS: number;
  dbusS: number;
  wallS: number;
  rss: number;
  rssNote: string;
}

/** CPU of systemd (PID 1) and dbus-daemon inside the sandbox, from their cgroups. */
function systemSide(sb: Sandbox) {
  return { systemd: cgroupCpuSeconds(`${sb.cgroupDir}/init.scope`), dbus: cgroupCpuSeconds(`${sb.cgroupDir}/system.slice/dbus.service`) };
}

async function agentPhase(sb: Sandbox, pid: number, rounds: () => number): Promise<Phase> {
  await sleep(WARM_S * 1000);
  const rss = new PeakSampler(() => treeRssBytes(pid));
  const own = new PeakSampler(() => rssBytes(pid));
  const s0 = systemSide(sb);
  const [tree0, own0, r0, t0] = [treeCpuSeconds(pid), ownCpuSeconds(pid), rounds(), performance.now()];
  rss.start();
  own.start();
  await sleep(SECONDS * 1000);
  const [tree1, own1, r1, wallS] = [treeCpuSeconds(pid), ownCpuSeconds(pid), rounds(), (performance.now() - t0) / 1000];
  const s1 = systemSide(sb);
  const ownS = own1 - own0;
  return {
    name: "gpudeck agent (D-Bus signals, nvidia-smi -lms, compute-apps when memory moved or every 5 s)",
    roundsPerS: (r1 - r0) / wallS,
    totalS: tree1 - tree0,
    smiS: tree1 - tree0 - ownS,
    ownS,
    systemdS: s1.systemd - s0.systemd,
    dbusS: s1.dbus - s0.dbus,
    wallS,
    rss: rss.stop(),
    rssNote: `agent ${mib(own.stop())} + its nvidia-smi`,
  };
}

/** The naive loop in the sandbox; bash's `times` after each part splits its children's CPU. */
async function naivePhase(sb: Sandbox, name: string, perUnit: boolean): Promise<Phase> {
  const show = perUnit
    ? `for u in ${names.join(" ")}; do systemctl show -p ${SHOW} "$u" >/dev/null; done`
    : `systemctl show -p ${SHOW} ${names.join(" ")} >/dev/null`;
  const script = `while :; do ${FAKE_NVIDIA_SMI_PATH} --query-gpu=${QUERY} --format=csv,noheader,nounits >/dev/null; echo N; times; ${show}; echo S; times; sleep 1; done`;
  const proc = sb.spawn(["/bin/bash", "-c", script], { env: { FAKE_NVIDIA_SMI_STATE: STATE } });
  const parts: { marker: string; childrenS: number; atMs: number }[] = [];
  let buf = "";
  let marker: string | null = null;
  let lineInTimes = 0;
  proc.child.stdout!.setEncoding("utf8");
  proc.child.stdout!.on("data", (chunk: string) => {
    buf += chunk;
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i).trim();
      buf = buf.slice(i + 1);
      if (line === "N" || line === "S") {
        marker = line;
        lineInTimes = 0;
        continue;
      }
      if (marker && ++lineInTimes === 2) {
        const [u, s] = line.split(/\s+/).map((t) => {
          const m = /^(\d+)m([\d.]+)s$/.exec(t);
          return m ? Number(m[1]) * 60 + Number(m[2]) : 0;
        });
        parts.push({ marker, childrenS: u! + s!, atMs: performance.now() });
        marker = null;
      }
    }
  });
  const pid = await proc.hostPid();
  try {
    await sleep((smoke ? 1 : 5) * 1000);
    const rss = new PeakSampler(() => treeRssBytes(pid), 50);
    const s0 = systemSide(sb);
    const [tree0, t0] = [treeCpuSeconds(pid), performance.now()];
    rss.start();
    await sleep(SECONDS * 1000);
    const [tree1, t1] = [treeCpuSeconds(pid), performance.now()];
    const s1 = systemSide(sb);
    let smiS = 0;
    let showS = 0;
    let rounds = 0;
    for (let k = 1; k < parts.length; k++) {
      const p = parts[k]!;
      if (p.atMs < t0 || p.atMs > t1) continue;
      const d = p.childrenS - parts[k - 1]!.childrenS;
      if (p.marker === "N") {
        smiS += d;
        rounds++;
      } else showS += d;
    }
    const wallS = (t1 - t0) / 1000;
    return {
      name,
      roundsPerS: rounds / wallS,
      totalS: tree1 - tree0,
      smiS,
      ownS: showS,
      systemdS: s1.systemd - s0.systemd,
      dbusS: s1.dbus - s0.dbus,
      wallS,
      rss: rss.stop(),
      rssNote: "peak of bash and its child",
    };
  } finally {
    await proc.kill("SIGKILL");
    await proc.exited;
  }
}

/** The agent's profile (written when it exits) out of the sandbox's tmpfs. */
async function copyProfiles(sb: Sandbox, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const ls = await sb.exec(["ls", "--", INSIDE_PROF_DIR]);
  for (const name of ls.stdout.split("\n").filter((n) => n.endsWith(".cpuprofile"))) {
    writeFileSync(path.join(dir, name), await sb.readFile(`${INSIDE_PROF_DIR}/${name}`));
    console.log(`agent profile: ${path.join(dir, name)}`);
  }
}

const pctOf = (s: number | null, wallS: number): Cell => (s === null ? null : `${((100 * s) / wallS).toFixed(1)} %`);

async function main() {
  printHeader(`Agent overhead on real systemd: ${UNITS} units and ${GPUS} GPUs at 1 Hz for ${SECONDS} s, vs a naive polling loop`, smoke);
  if (!sandboxAvailable("agent overhead")) return;
  const units = Object.fromEntries(names.map((n, i) => [n, unitFile(i)]));
  const host = await bootHost(
    "bench-ov",
    units,
    "bench-u*.service",
    { FAKE_NVIDIA_SMI_STATE: STATE, GPUDECK_GPU_INTERVAL_MS: "1000" },
    async (sb) => {
      await sb.writeFile(STATE, JSON.stringify({ gpus: Array.from({ length: GPUS }, (_, i) => fakeGpu(i)), allocations: [] }));
      await sb.systemctl(["start", ...names], { timeoutMs: 120_000 });
    },
    PROF_DIR ? ["--cpu-prof", `--cpu-prof-dir=${INSIDE_PROF_DIR}`] : [],
  );
  const phases: Phase[] = [];
  try {
    const { agent, sb } = host;
    const gpuEvents = () => agent.events.filter((e) => e.kind === "gpu").length;
    const pid = await agent.proc.hostPid();
    phases.push(await agentPhase(sb, pid, gpuEvents));
    const last = [...agent.events].reverse().find((e) => e.kind === "gpu");
    const seenGpus = last && last.kind === "gpu" ? last.sample.gpus.length : 0;
    const holders = last && last.kind === "gpu" ? last.sample.gpus.reduce((n, g) => n + g.holders.filter((h) => h.kind === "unit").length, 0) : 0;
    console.log(`the agent saw ${seenGpus} GPUs, ${holders} holders tied to units; (its event stream had one client, like a panel)`);
    await agent.stop();
    if (PROF_DIR) await copyProfiles(sb, PROF_DIR);
    phases.push(await naivePhase(sb, `naive: nvidia-smi; ${UNITS} × systemctl show; sleep 1`, true));
    phases.push(await naivePhase(sb, `naive, one systemctl show for all ${UNITS} units`, false));
  } finally {
    await host.stop();
  }
  console.log("");
  printTable(
    ["watcher", "rounds/s", "CPU (of one core)", "nvidia-smi part (fake)", "the rest (agent process / systemctl)", "systemd + dbus-daemon", "RSS", "RSS is"],
    phases.map((p) => [
      p.name,
      p.roundsPerS.toFixed(2),
      pctOf(p.totalS, p.wallS),
      pctOf(p.smiS, p.wallS),
      pctOf(p.ownS, p.wallS),
      pctOf(p.systemdS + p.dbusS, p.wallS),
      mib(p.rss),
      p.rssNote,
    ]),
  );
  const [agent, naive, batched] = phases as [Phase, Phase, Phase];
  const share = (p: Phase) => p.totalS / p.wallS;
  console.log(
    `CPU seconds over ${SECONDS} s: agent ${agent.totalS.toFixed(2)} s, naive loop ${naive.totalS.toFixed(2)} s (${(share(naive) / share(agent)).toFixed(1)}× the agent), ` +
      `batched loop ${batched.totalS.toFixed(2)} s; without nvidia-smi: agent process ${agent.ownS!.toFixed(2)} s vs ${naive.ownS!.toFixed(2)} s of systemctl. ` +
      "The naive loops run slower than 1 Hz (sleep 1 after the work), which understates their cost per round.\n",
  );
  const targets = new Targets();
  targets.check(
    "agent CPU ≤ 1/5 of the naive loop's",
    share(agent) <= share(naive) / 5,
    `${(100 * share(agent)).toFixed(1)} % vs ${(100 * share(naive)).toFixed(1)} % of a core`,
  );
  targets.print();
}

runMain(main);
