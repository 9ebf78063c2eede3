/**
 * GPU-aware restarts, the crash-loop brake and GPU faults against a real systemd 252 (the
 * namespace sandbox) with the real agent inside it and the fake nvidia-smi, as on a host:
 *
 *   gpu-wait.service registers 4000 MiB in the fake under its own PID; when that process dies the
 *   fake keeps the memory for RELEASE_MS without listing the process (the incident). A GPU-aware
 *   restart must stop it, wait, and start it only after the release — checked against systemd's
 *   own start timestamp and the fake's record of the death. Then: a process of another unit on
 *   its GPU (refused, named, then SIGKILLed through gpus.killHolder), a timeout, a cancel, the
 *   safe ExecStartPre helper on a restart by hand, a real Restart=always loop stopped with
 *   units.stopLoop, and an Xid attributed to a unit's real PID.
 *
 * Honest about the fakes: nvidia-smi is the fake (e2e/fakes/nvidia-smi); the kernel log is a
 * fake journalctl (`tail -F` of a file the test appends journalctl-JSON lines to), because the
 * sandbox's journald has no kernel messages. systemd, D-Bus, /proc, cgroups, signals are real.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../server/contract/operations";
import { FAKE_NVIDIA_SMI_PATH, fakeGpu, type FakeNvidiaSmiState } from "../fakes/fakeNvidiaSmi";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { REPO_ROOT, RunningAgent, sleep } from "../systemd/agentHarness";

const skip = warnIfUnsupported("GPU-aware operations e2e (e2e/operations/operations.test.ts)");

const STATE = "/run/fake-nvidia-smi.json";
const KMSG = "/run/fake-kmsg.jsonl";
const RELEASE_MS = 4000;
const HOLD_MIB = 4000;
const GPU = fakeGpu(0, { baseUsedMiB: 3 });

const holderUnit = (description: string, extra = "", timeoutStartSec = 20) => `[Unit]
Description=${description}
[Service]
ExecStart=/usr/local/bin/gpu-holder 0 ${HOLD_MIB}
TimeoutStartSec=${timeoutStartSec}
${extra}`;

const UNITS: Record<string, string> = {
  "gpu-wait.service": holderUnit("fake inference server holding GPU memory"),
  "gpu-other.service": holderUnit("another tenant on the same GPU"),
  "gpu-pre.service": holderUnit("started by hand: the safe ExecStartPre helper", `ExecStartPre=${REPO_ROOT}deploy/wait-gpus-free 0 15\n`, 30),
  "gpu-loop.service": `[Unit]
Description=crash loop the start limit cannot end
StartLimitIntervalSec=0
[Service]
ExecStart=/bin/sh -c 'echo "RuntimeError: CUDA error: an illegal memory access was encountered"; exit 3'
Restart=always
RestartSec=300ms
`,
};

describe.skipIf(skip)("GPU-aware operations against real systemd", () => {
  let sb: Sandbox;
  let agent: RunningAgent;

  async function writeState(change: (s: FakeNvidiaSmiState) => void): Promise<void> {
    const s = JSON.parse(await sb.readFile(STATE)) as FakeNvidiaSmiState;
    change(s);
    // atomically: the fake and --fake-alloc read it at any time
    await sb.writeFile(`${STATE}.new`, JSON.stringify(s));
    const r = await sb.exec(["mv", "-f", `${STATE}.new`, STATE]);
    if (r.code !== 0) throw new Error(r.stderr);
  }

  async function show(unit: string, props: string[]): Promise<Record<string, string>> {
    const r = await sb.systemctl(["show", `--property=${props.join(",")}`, unit]);
    return Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => l.split("=", 2) as [string, string]),
    );
  }

  async function mainPid(unit: string): Promise<number> {
    return Number((await show(unit, ["MainPID"])).MainPID);
  }

  /** When the fake saw `pid` die (ms), from its record. */
  async function deathOf(pid: number): Promise<number | undefined> {
    const deaths = JSON.parse(await sb.readFile(`${STATE}.deaths.json`).catch(() => "{}")) as Record<string, number>;
    return Object.entries(deaths).find(([k]) => k.startsWith(`${pid}@`))?.[1];
  }

  function operationEvents(id: string, since = 0): Operation[] {
    return agent.events.slice(since).flatMap((e) => (e.kind === "operation" && e.operation.id === id ? [e.operation] : []));
  }

  function steps(id: string): string[] {
    const out: string[] = [];
    for (const o of operationEvents(id)) if (out.at(-1) !== o.step) out.push(o.step);
    return out;
  }

  async function ended(id: string, timeoutMs = 30_000): Promise<Operation> {
    return agent.waitFor(
      `operation ${id} to end`,
      () => operationEvents(id).find((o) => ["started", "failed", "timed-out", "canceled"].includes(o.step)),
      timeoutMs,
    );
  }

  function lastSample() {
    for (let i = agent.events.length - 1; i >= 0; i--) {
      const e = agent.events[i]!;
      if (e.kind === "gpu") return e.sample;
    }
    return null;
  }

  async function holding(unit: string): Promise<number> {
    await sb.systemctl(["start", unit]);
    const pid = await mainPid(unit);
    await agent.waitFor(`${unit}'s memory in a sample`, () =>
      agent.events.some((e) => e.kind === "gpu" && e.sample.gpus[0]?.holders.some((h) => h.pid === pid && h.unit === unit && h.kind === "unit")),
    );
    return pid;
  }

  beforeAll(async () => {
    sb = await Sandbox.boot({ name: "gpu-ops" });
    await sb.writeFile("/usr/local/bin/nvidia-smi", `#!/bin/sh\nexec ${FAKE_NVIDIA_SMI_PATH} "$@"\n`, "0755");
    await sb.writeFile("/usr/local/bin/gpu-holder", `#!/bin/sh\nnvidia-smi --fake-alloc $$ "$1" "$2" || exit 1\nexec sleep infinity\n`, "0755");
    await sb.writeFile(KMSG, "");
    await sb.writeFile(
      "/usr/local/bin/fake-journalctl",
      `#!/bin/sh\n# the kernel log as journalctl -o json would print it (arguments ignored)\nexec tail -n +1 -F ${KMSG}\n`,
      "0755",
    );
    for (const [name, text] of Object.entries(UNITS)) await sb.writeFile(`/etc/systemd/system/${name}`, text);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, {
      units: "gpu-*.service",
      env: { GPUDECK_GPU_INTERVAL_MS: "500", GPUDECK_CRASH_LOOP: "3/1m", GPUDECK_JOURNALCTL: "/usr/local/bin/fake-journalctl" },
    });
    await writeState((s) => {
      s.gpus = [GPU];
      s.releaseDelayMs = RELEASE_MS;
    });
  }, 90_000);

  afterAll(async () => {
    await agent?.stop();
    await sb?.stop();
  }, 30_000);

  it("restart with waitForGpus: stop, wait for the fake to release the memory, then start (steps in order)", async () => {
    const oldPid = await holding("gpu-wait.service");
    const m = agent.mark();
    const r = await agent.client.units.restart.mutate({ name: "gpu-wait.service", waitForGpus: true, reason: "e2e" });
    if (!("operationId" in r)) throw new Error("no operation");
    expect(r).toMatchObject({
      jobId: null,
      actionId: null,
      operation: { step: "stopping", unit: "gpu-wait.service", timeoutSource: "unit", timeoutMs: 20_000 },
    });
    const done = await ended(r.operationId);
    expect(done.step).toBe("started");
    expect(steps(r.operationId)).toEqual(["stopping", "waiting-for-gpus", "starting", "started"]);
    // while waiting, what was held and by whom (the exited holder), as numbers
    const waiting = operationEvents(r.operationId, m).filter((o) => o.step === "waiting-for-gpus");
    expect(waiting.some((o) => o.heldMiB === HOLD_MIB && o.pids.includes(oldPid) && o.gpus[0]!.exitedPids.includes(oldPid))).toBe(true);
    expect(waiting.at(-1)!.heldMiB).toBe(0);
    // the start came after the release: systemd's own timestamp against the fake's death record
    const died = await deathOf(oldPid);
    expect(died).toBeDefined();
    const unit = await agent.client.units.get.query({ name: "gpu-wait.service" });
    const startedAtMs = unit.timestamps.inactiveExitUsec / 1000;
    expect(startedAtMs).toBeGreaterThanOrEqual(died! + RELEASE_MS);
    expect(unit.activeState).toBe("active");
    expect(await mainPid("gpu-wait.service")).not.toBe(oldPid);
    console.info(`death seen ${died}, released ${died! + RELEASE_MS}, started ${startedAtMs} (+${Math.round(startedAtMs - died! - RELEASE_MS)} ms)`);
    // the stop and the start are in the action log, with the operation's id
    const actions = (await agent.client.units.timeline.query({ name: "gpu-wait.service" })).actions.filter((a) => a.reason?.includes(r.operationId));
    expect(actions.map((a) => [a.action, a.outcome])).toEqual([
      ["stop", "done"],
      ["start", "done"],
    ]);
  }, 60_000);

  it("a process of another unit on its GPU: refused before the stop, named; gpus.killHolder SIGKILLs it only with its start time", async () => {
    const other = await holding("gpu-other.service");
    const r = await agent.client.units.restart.mutate({ name: "gpu-wait.service", waitForGpus: true });
    if (!("operationId" in r)) throw new Error("no operation");
    expect(r.operation.step).toBe("failed");
    expect(r.operation.foreign).toEqual([
      expect.objectContaining({
        pid: other,
        unit: "gpu-other.service",
        cmdline: ["sleep", "infinity"],
        gpuIndex: 0,
        usedMiB: HOLD_MIB,
        startedAtMs: expect.any(Number),
      }),
    ]);
    expect(r.operation.message).toMatch(new RegExp(`^Not restarted: PID ${other} \\(gpu-other\\.service: sleep infinity\\) holds 3\\.9 GiB on GPU 0`));
    expect((await show("gpu-wait.service", ["ActiveState"])).ActiveState).toBe("active"); // nothing stopped
    const startedAtMs = r.operation.foreign[0]!.startedAtMs!;
    await expect(agent.client.gpus.killHolder.mutate({ unit: "gpu-wait.service", pid: other, startedAtMs: startedAtMs - 60_000 })).rejects.toThrow(
      /different process/,
    );
    expect((await show("gpu-other.service", ["ActiveState"])).ActiveState).toBe("active");
    const killed = await agent.client.gpus.killHolder.mutate({ unit: "gpu-wait.service", pid: other, startedAtMs });
    expect(killed).toMatchObject({ killed: true, pid: other, unit: "gpu-other.service" });
    await agent.waitFor("gpu-other to die of SIGKILL", async () => (await show("gpu-other.service", ["ActiveState"])).ActiveState === "failed");
    await agent.waitFor("the agent to see it gone", () => lastSample()?.gpus[0]?.holders.some((h) => h.pid === other && h.kind === "unit") === false);
    expect(await show("gpu-other.service", ["Result", "ExecMainStatus"])).toMatchObject({ Result: "signal", ExecMainStatus: "9" });
    await sb.systemctl(["reset-failed", "gpu-other.service"]);
    await sb.exec(["nvidia-smi", "--fake-free", String(other)]); // the driver forgets a released process
  }, 60_000);

  it("timeout: timed-out with the unit left stopped and what is still held; cancel: canceled, left stopped", async () => {
    const pid = await mainPid("gpu-wait.service");
    // this process's memory outlasts the timeout
    await writeState((s) => s.allocations.filter((a) => a.pid === pid).forEach((a) => (a.releaseDelayMs = 120_000)));
    const r = await agent.client.units.restart.mutate({ name: "gpu-wait.service", waitForGpus: true, timeoutMs: 4000 });
    if (!("operationId" in r)) throw new Error("no operation");
    const done = await ended(r.operationId);
    expect(done, done.message).toMatchObject({ step: "timed-out", timeoutSource: "call", timeoutMs: 4000 });
    expect(done.message).toMatch(
      /^Timed out after 4 s while waiting \(.*\); 3\.9 GiB still held\. gpu-wait\.service was left inactive \(dead\) and not started\.$/,
    );
    expect((await show("gpu-wait.service", ["ActiveState"])).ActiveState).toBe("inactive");

    const c = await agent.client.units.start.mutate({ name: "gpu-wait.service", waitForGpus: true });
    if (!("operationId" in c)) throw new Error("no operation");
    await agent.waitFor("waiting", () => operationEvents(c.operationId).some((o) => o.step === "waiting-for-gpus"));
    await expect(agent.client.units.start.mutate({ name: "gpu-wait.service", waitForGpus: true })).rejects.toThrow(new RegExp(c.operationId));
    await agent.client.operations.cancel.mutate({ id: c.operationId });
    const canceled = await ended(c.operationId);
    expect(canceled.step).toBe("canceled");
    expect(canceled.message).toMatch(/was left inactive \(dead\) and not started/);
    await sleep(1000);
    expect((await show("gpu-wait.service", ["ActiveState"])).ActiveState).toBe("inactive");
    expect((await agent.client.operations.list.query({ unit: "gpu-wait.service" })).slice(0, 2).map((o) => o.step)).toEqual(["canceled", "timed-out"]);
    await sb.exec(["nvidia-smi", "--fake-free", String(pid)]);
  }, 60_000);

  it("the safe ExecStartPre helper: a restart by hand waits for no compute apps on the GPU, then starts", async () => {
    // a GPU nobody uses, and a driver that lists a dying process until its memory is freed
    await sb.systemctl(["stop", "gpu-wait.service", "gpu-other.service"]);
    await writeState((s) => {
      s.allocations = [];
      s.listExitedHolders = true;
    });
    await agent.waitFor("GPU 0 free", () => lastSample()?.gpus[0]?.holders.length === 0);
    const oldPid = await holding("gpu-pre.service");
    await sb.systemctl(["restart", "gpu-pre.service"]);
    const after = await show("gpu-pre.service", ["ActiveState", "MainPID"]);
    expect(after.ActiveState).toBe("active");
    const died = await deathOf(oldPid);
    expect(died).toBeDefined();
    const unit = await agent.client.units.get.query({ name: "gpu-pre.service" });
    expect(unit.execMainStartUsec / 1000).toBeGreaterThanOrEqual(died! + RELEASE_MS);
    const journal = await agent.client.units.journal.query({ name: "gpu-pre.service", lines: 50 });
    expect(journal.some((j) => /compute process\(es\) still running; waiting/.test(j.message))).toBe(true);
    expect(journal.some((j) => /run no compute process/.test(j.message))).toBe(true);
    await sb.systemctl(["stop", "gpu-pre.service"]);
    await writeState((s) => void (s.listExitedHolders = false));
  }, 60_000);

  it("crash-loop brake on a real Restart=always unit: detected, diagnosed, stopped with the evidence", async () => {
    await sb.systemctl(["start", "gpu-loop.service"], { check: false });
    const marked = await agent.waitFor(
      "the crash-loop marker",
      () =>
        agent.events
          .flatMap((e) => (e.kind === "unit" && e.unit.name === "gpu-loop.service" && e.unit.crashLoop?.startLimitStops === false ? [e.unit] : []))
          .at(-1),
      20_000,
    );
    expect(marked.crashLoop).toMatchObject({ rule: "3/1m", windowMs: 60_000 });
    expect(marked.crashLoop!.restarts).toBeGreaterThanOrEqual(3);
    const listed = (await agent.client.units.list.query()).units.find((u) => u.name === "gpu-loop.service");
    expect(listed?.crashLoop).toBeDefined();
    const d = await agent.client.units.diagnose.query({ name: "gpu-loop.service" });
    expect(d).toMatchObject({ code: "crash-loop-endless", nextStep: { action: { kind: "stop-loop", unit: "gpu-loop.service" } } });
    expect(d.headline).toMatch(/its start limit is off/);
    const r = await agent.client.units.stopLoop.mutate({ name: "gpu-loop.service", reason: "e2e loop" });
    expect(r.evidence.restarts.length).toBeGreaterThanOrEqual(3);
    expect(r.evidence.restarts.some((x) => x.exit === "status=3")).toBe(true);
    expect(r.evidence.lastLogLine?.message).toBe("RuntimeError: CUDA error: an illegal memory access was encountered");
    expect(r.evidence).toMatchObject({ restart: "always", restartUsec: 300_000, startLimitIntervalUsec: 0 });
    await agent.waitFor("reset-failed after the stop", async () =>
      (await agent.client.units.timeline.query({ name: "gpu-loop.service" })).actions.some((a) => a.action === "reset-failed" && a.reason === "e2e loop"),
    );
    const restarts = Number((await show("gpu-loop.service", ["NRestarts"])).NRestarts);
    await sleep(1500);
    expect(await show("gpu-loop.service", ["ActiveState", "Result"])).toMatchObject({ ActiveState: "inactive", Result: "success" });
    expect(Number((await show("gpu-loop.service", ["NRestarts"])).NRestarts)).toBe(restarts);
    const lastUnit = () => agent.events.flatMap((e) => (e.kind === "unit" && e.unit.name === "gpu-loop.service" ? [e.unit] : [])).at(-1);
    await agent.waitFor("the marker gone", () => lastUnit() !== undefined && !lastUnit()!.crashLoop);
  }, 60_000);

  it("an Xid in the kernel log is attributed to the unit of its (real) PID and shows in faults, timeline and diagnosis", async () => {
    const pid = await holding("gpu-wait.service");
    const line = {
      __CURSOR: "s=fake;i=1",
      __REALTIME_TIMESTAMP: String(Date.now() * 1000),
      _TRANSPORT: "kernel",
      MESSAGE: `NVRM: Xid (PCI:0000:18:00): 79, pid=${pid}, name=sleep, GPU has fallen off the bus.`,
    };
    await sb.exec(["sh", "-c", `printf '%s\\n' "$1" >> ${KMSG}`, "append", JSON.stringify(line)]);
    const fault = await agent.waitFor("the fault event", () => agent.events.flatMap((e) => (e.kind === "fault" ? [e.fault] : [])).at(-1));
    expect(fault).toMatchObject({
      code: 79,
      pid,
      unit: "gpu-wait.service",
      gpuUuid: GPU.uuid,
      gpuIndex: 0,
      resetRequired: true,
      title: "GPU has fallen off the bus",
    });
    expect((await agent.client.gpus.faults.query({ unit: "gpu-wait.service" })).map((f) => f.id)).toContain(fault.id);
    expect((await agent.client.units.timeline.query({ name: "gpu-wait.service" })).faults.map((f) => f.code)).toEqual([79]);
    const d = await agent.client.units.diagnose.query({ name: "gpu-wait.service" });
    expect(d.code).toBe("gpu-xid");
    expect(d.headline).toMatch(/^Xid 79: GPU has fallen off the bus at \d\d:\d\d UTC on GPU 0 — restart will not help; the host needs a reset\.$/);
    const metrics = await (await fetch(`${agent.url}/metrics`, { headers: { authorization: `Bearer ${agent.token}` } })).text();
    expect(metrics).toMatch(/gpudeck_gpu_xid_errors_total\{pci="0000:18:00",uuid="GPU-[^"]+",code="79"\} 1/);
  }, 60_000);
});
