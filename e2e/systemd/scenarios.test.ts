/**
 * The agent against a real systemd 252: each scenario acts through the agent's HTTP API and
 * asserts the exact ordered transition sequence the agent streams (events.watch over SSE),
 * and the job result. The agent runs inside the sandbox, as on a real host.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "./agentHarness";

const skip = warnIfUnsupported("systemd adapter scenarios (e2e/systemd/scenarios.test.ts)");

const UNITS: Record<string, string> = {
  "e2e-slowpre.service": `[Unit]
Description=slow ExecStartPre, like waiting for GPU memory
[Service]
ExecStartPre=/bin/sleep 1.5
ExecStart=/bin/sleep infinity
`,
  "e2e-notify.service": `[Service]
Type=notify
NotifyAccess=all
ExecStartPre=/bin/sleep 0.3
ExecStart=/bin/sh -c 'sleep 0.5; systemd-notify --ready; exec sleep infinity'
`,
  "e2e-prefail.service": `[Service]
ExecStartPre=/bin/sh -c 'echo "GPU 0 still busy" >&2; exit 1'
ExecStart=/bin/sleep infinity
`,
  "e2e-timeout.service": `[Service]
TimeoutStartSec=1
ExecStartPre=/bin/sleep 10
ExecStart=/bin/sleep infinity
`,
  "e2e-flap.service": `[Unit]
StartLimitBurst=3
StartLimitIntervalSec=60
[Service]
ExecStart=/bin/sh -c 'sleep 0.3; exit 1'
Restart=on-failure
RestartSec=100ms
`,
  "e2e-restartpre.service": `[Service]
ExecStartPre=/bin/sleep 2
ExecStart=/bin/sleep infinity
`,
  "e2e-double.service": `[Service]
ExecStartPre=/bin/sleep 0.5
ExecStart=/bin/sleep infinity
`,
  "e2e-reload.service": `[Service]
ExecStartPre=/bin/sleep 1.5
ExecStart=/bin/sleep infinity
`,
  "e2e-kill.service": `[Service]
ExecStart=/bin/sleep infinity
`,
  "e2e-logger.service": `[Service]
ExecStart=/bin/sh -c 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 0.2; done'
`,
  "e2e-broken.service": `[Service]
ExecStart=relative/path/is/not/allowed
`,
  "outside.service": `[Service]
ExecStart=/bin/sleep infinity
`,
};

describe.skipIf(skip)("agent + real systemd: unit scenarios", () => {
  let sb: Sandbox;
  let agent: RunningAgent;

  beforeAll(async () => {
    sb = await Sandbox.boot({ name: "scenarios" });
    for (const [name, text] of Object.entries(UNITS)) await sb.writeFile(`/etc/systemd/system/${name}`, text);
    await sb.exec(["ln", "-s", "/dev/null", "/etc/systemd/system/e2e-masked.service"]);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "e2e-*.service" });
  });

  afterAll(async () => {
    await agent?.stop().catch(() => undefined);
    await sb?.stop();
  });

  it("slow ExecStartPre: activating/start-pre with the control process visible, then running", async () => {
    const unit = "e2e-slowpre.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit, reason: "e2e" });
    expect(jobId).toBeGreaterThan(0);
    const pre = await agent.reaches(unit, "activating/start-pre", m);
    expect(pre.controlPid).toBeGreaterThan(0);
    expect(pre.mainPid).toBe(0);

    // while in start-pre: the detail shows which command runs, from /proc and the cgroup
    const detail = await agent.client.units.get.query({ name: unit });
    expect(detail.subState).toBe("start-pre");
    expect(detail.job).toEqual({ id: jobId, type: "start" });
    expect(detail.controlProcess?.cmdline).toEqual(["/bin/sleep", "1.5"]);
    expect(detail.processes.map((p) => p.pid)).toContain(detail.controlPid);
    expect(detail.execStartPre).toEqual([{ path: "/bin/sleep", argv: ["/bin/sleep", "1.5"], ignoreErrors: false }]);
    expect(detail.execStart[0]?.argv).toEqual(["/bin/sleep", "infinity"]);
    expect(detail.timeoutStartUsec).toBe(90_000_000);
    expect(detail.controlGroup).toBe(`/system.slice/${unit}`);
    expect(detail.fragmentPath).toBe(`/etc/systemd/system/${unit}`);

    expect(await agent.jobResult(jobId!)).toBe("done");
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
    const [t1, t2] = agent.transitions(unit, m);
    // systemd's own timestamps: start-pre lasted the 1.5 s the ExecStartPre slept
    expect((t2!.atUsec - t1!.atUsec) / 1e6).toBeGreaterThan(1.4);
    expect((t2!.atUsec - t1!.atUsec) / 1e6).toBeLessThan(2.5);
    expect(t2!.mainPid).toBeGreaterThan(0);
    expect(agent.jobs(unit, m).map((j) => j.phase)).toEqual(["queued", "running", "finished"]);

    const running = await agent.client.units.get.query({ name: unit });
    expect(running.mainProcess?.cmdline).toEqual(["/bin/sleep", "infinity"]);
    expect(running.controlProcess).toBeNull();

    const journal = await agent.client.units.journal.query({ name: unit, lines: 20 });
    expect(journal.some((e) => e.message.startsWith("Started") && e.jobResult === "done")).toBe(true);
  });

  it("stop: deactivating/stop-sigterm, then inactive/dead", async () => {
    const unit = "e2e-slowpre.service";
    await agent.reaches(unit, "active/running");
    const m = agent.mark();
    const { jobId } = await agent.client.units.stop.mutate({ name: unit });
    expect(await agent.jobResult(jobId!)).toBe("done");
    expect(agent.sequence(unit, m)).toEqual(["active/running → deactivating/stop-sigterm", "deactivating/stop-sigterm → inactive/dead"]);
  });

  it("Type=notify: start-pre, then start until READY=1, then running", async () => {
    const unit = "e2e-notify.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(jobId!)).toBe("done");
    expect(agent.sequence(unit, m)).toEqual([
      "inactive/dead → activating/start-pre",
      "activating/start-pre → activating/start",
      "activating/start → active/running",
    ]);
  });

  it("ExecStartPre exits 1: failed/failed with Result=exit-code, job failed", async () => {
    const unit = "e2e-prefail.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(jobId!)).toBe("failed");
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → failed/failed"]);
    expect(agent.transitions(unit, m).at(-1)!.result).toBe("exit-code");
    const journal = await agent.client.units.journal.query({ name: unit, lines: 20 });
    expect(journal.some((e) => e.message === "GPU 0 still busy")).toBe(true);
  });

  it("TimeoutStartSec hit in start-pre: stop-sigterm, then failed with Result=timeout", async () => {
    const unit = "e2e-timeout.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    // the unit's start timed out; the job itself did not (that would be JobTimeoutSec=): "failed"
    expect(await agent.jobResult(jobId!)).toBe("failed");
    expect(agent.sequence(unit, m)).toEqual([
      "inactive/dead → activating/start-pre",
      "activating/start-pre → deactivating/stop-sigterm",
      "deactivating/stop-sigterm → failed/failed",
    ]);
    const [pre, sigterm, failed] = agent.transitions(unit, m);
    expect(sigterm!.result).toBe("timeout");
    expect(failed!.result).toBe("timeout");
    expect((sigterm!.atUsec - pre!.atUsec) / 1e6).toBeGreaterThan(0.95);
    expect((sigterm!.atUsec - pre!.atUsec) / 1e6).toBeLessThan(1.6);
  });

  it("Restart=on-failure loops to the start limit; reset-failed and start again", async () => {
    const unit = "e2e-flap.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(jobId!)).toBe("done");
    await agent.waitFor("the start limit", () => {
      const last = agent.transitions(unit, m).at(-1);
      return last && last.to.activeState === "failed" && !last.inRestartCycle && last;
    });
    const cycle = [
      "active/running → failed/failed (cycle)",
      "failed/failed → activating/auto-restart (cycle)",
      "activating/auto-restart → inactive/dead (cycle)",
    ];
    expect(agent.sequence(unit, m)).toEqual([
      "inactive/dead → active/running",
      ...cycle,
      "inactive/dead → active/running",
      ...cycle,
      "inactive/dead → active/running",
      ...cycle,
      "inactive/dead → failed/failed",
    ]);
    const last = agent.transitions(unit, m).at(-1)!;
    expect(last.nRestarts).toBe(3);
    // the automatic restart jobs: two got the unit running again, the last hit the start limit
    const restartJobs = agent.jobs(unit, m).filter((j) => j.phase === "finished" && j.jobId !== jobId);
    expect(restartJobs.map((j) => `${j.jobType}:${j.result}`)).toEqual(["restart:done", "restart:done", "restart:failed"]);

    const m2 = agent.mark();
    expect(await agent.client.units.resetFailed.mutate({ name: unit })).toMatchObject({ jobId: null });
    await agent.reaches(unit, "inactive/dead", m2);
    const again = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(again.jobId!)).toBe("done");
    expect(agent.sequence(unit, m2).slice(0, 2)).toEqual(["failed/failed → inactive/dead", "inactive/dead → active/running"]);
    const stop = await agent.client.units.stop.mutate({ name: unit });
    await agent.jobResult(stop.jobId!);
    await agent.waitFor("flap to settle", () => ["inactive", "failed"].includes(agent.transitions(unit).at(-1)!.to.activeState));
  });

  it("restart while in start-pre: the ExecStartPre is killed and the unit starts over", async () => {
    const unit = "e2e-restartpre.service";
    const m = agent.mark();
    const start = await agent.client.units.start.mutate({ name: unit });
    await agent.reaches(unit, "activating/start-pre", m);
    const restart = await agent.client.units.restart.mutate({ name: unit });
    // systemd merges the restart into the running start job: same job, one "done"
    expect(restart.jobId).toBe(start.jobId);
    expect(await agent.jobResult(restart.jobId!)).toBe("done");
    expect(agent.sequence(unit, m)).toEqual([
      "inactive/dead → activating/start-pre",
      "activating/start-pre → deactivating/stop-sigterm",
      // the ExecStartPre died of SIGTERM: systemd counts that as a failure of the unit
      "deactivating/stop-sigterm → failed/failed",
      "failed/failed → activating/start-pre",
      "activating/start-pre → active/running",
    ]);
    expect(agent.transitions(unit, m)[2]!.result).toBe("signal");
    expect(agent.jobs(unit, m).filter((j) => j.phase === "finished")).toHaveLength(1);
  });

  it("two restarts in quick succession", async () => {
    const unit = "e2e-double.service";
    const start = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(start.jobId!)).toBe("done");
    const m = agent.mark();
    const r1 = await agent.client.units.restart.mutate({ name: unit });
    const r2 = await agent.client.units.restart.mutate({ name: unit });
    const results = [await agent.jobResult(r1.jobId!), await agent.jobResult(r2.jobId!)];
    await agent.reaches(unit, "active/running", m);
    const seq = agent.sequence(unit, m);
    // the second restart lands in the first one's start-pre (0.5 s) and kills its ExecStartPre…
    expect({ results, seq }).toEqual({
      results: ["done", "done"],
      seq: [
        "active/running → deactivating/stop-sigterm",
        "deactivating/stop-sigterm → inactive/dead",
        "inactive/dead → activating/start-pre",
        "activating/start-pre → deactivating/stop-sigterm",
        "deactivating/stop-sigterm → failed/failed",
        "failed/failed → activating/start-pre",
        "activating/start-pre → active/running",
      ],
    });
    // …and systemd merges it into that same (still running) job
    expect(r2.jobId).toBe(r1.jobId);
    expect(
      agent
        .jobs(unit, m)
        .filter((j) => j.phase === "finished")
        .map((j) => j.result),
    ).toEqual(["done"]);
  });

  it("daemon-reload during a start changes nothing in the sequence", async () => {
    const unit = "e2e-reload.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    await agent.reaches(unit, "activating/start-pre", m);
    await sb.systemctl(["daemon-reload"]);
    await sleep(200);
    await sb.systemctl(["daemon-reload"]);
    expect(await agent.jobResult(jobId!)).toBe("done");
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
    expect(agent.systemdStates(m).filter((s) => s !== "ok")).toEqual([]);
  });

  it("kill: SIGKILL to the main process, the unit fails with Result=signal", async () => {
    const unit = "e2e-kill.service";
    const start = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(start.jobId!)).toBe("done");
    const mainPid = (await agent.client.units.get.query({ name: unit })).mainPid;
    const m = agent.mark();
    expect(await agent.client.units.kill.mutate({ name: unit })).toMatchObject({ jobId: null });
    const failed = await agent.reaches(unit, "failed/failed", m);
    expect(agent.sequence(unit, m)).toEqual(["active/running → failed/failed"]);
    expect(failed.result).toBe("signal");
    const detail = await agent.client.units.get.query({ name: unit });
    expect([detail.execMainCode, detail.execMainStatus]).toEqual([2, 9]); // CLD_KILLED, SIGKILL
    expect(detail.processes.map((p) => p.pid)).not.toContain(mainPid);
  });

  it("follows a unit's journal live over the API", async () => {
    const unit = "e2e-logger.service";
    const start = await agent.client.units.start.mutate({ name: unit });
    expect(await agent.jobResult(start.jobId!)).toBe("done");
    const cursors: string[] = [];
    const ticks = await new Promise<string[]>((resolve, reject) => {
      const got: string[] = [];
      const timer = setTimeout(() => reject(new Error(`only got ${JSON.stringify(got)}`)), 10_000);
      const sub = agent.client.units.followJournal.subscribe(
        { name: unit },
        {
          onData: (d: unknown) => {
            const entry = (d && typeof d === "object" && "data" in d ? (d as { data: { message: string; cursor: string } }).data : d) as {
              message: string;
              cursor: string;
            };
            if (entry.message.startsWith("tick ")) {
              got.push(entry.message);
              cursors.push(entry.cursor);
            }
            if (got.length === 3) {
              clearTimeout(timer);
              sub.unsubscribe();
              resolve(got);
            }
          },
          onError: reject,
        },
      );
    });
    const numbers = ticks.map((t) => Number(t.slice(5)));
    expect(numbers[1]).toBe(numbers[0]! + 1);
    expect(numbers[2]).toBe(numbers[0]! + 2);

    // a client that reconnects after the first tick gets the next ones first: nothing lost or repeated
    const resumed = await new Promise<string[]>((resolve, reject) => {
      const got: string[] = [];
      const timer = setTimeout(() => reject(new Error(`only got ${JSON.stringify(got)}`)), 10_000);
      const sub = agent.client.units.followJournal.subscribe(
        { name: unit, lastEventId: cursors[0] },
        {
          onData: (d: unknown) => {
            const entry = (d && typeof d === "object" && "data" in d ? (d as { data: { message: string } }).data : d) as { message: string };
            if (entry.message.startsWith("tick ")) got.push(entry.message);
            if (got.length === 2) {
              clearTimeout(timer);
              sub.unsubscribe();
              resolve(got);
            }
          },
          onError: reject,
        },
      );
    });
    expect(resumed).toEqual(ticks.slice(1, 3));
    const backlog = await agent.client.units.journal.query({ name: unit, lines: 3 });
    expect(backlog).toHaveLength(3);
    expect(backlog.every((e) => e.pid !== null && e.unit === unit)).toBe(true);
    const stop = await agent.client.units.stop.mutate({ name: unit });
    expect(await agent.jobResult(stop.jobId!)).toBe("done");
  });

  it("refuses a unit outside GPUDECK_UNITS, and invalid names, without touching systemd", async () => {
    const m = agent.mark();
    await expect(agent.client.units.start.mutate({ name: "outside.service" })).rejects.toThrow(/allow-list|may manage/);
    await expect(agent.client.units.start.mutate({ name: "--job-mode=isolate.service" })).rejects.toThrow();
    await expect(agent.client.units.get.query({ name: "outside.service" })).rejects.toThrow();
    await sleep(300);
    expect((await sb.systemctl(["is-active", "outside.service"], { check: false })).stdout.trim()).toBe("inactive");
    expect(agent.events.slice(m).filter((e) => e.kind === "job" || e.kind === "transition")).toEqual([]);
    expect((await agent.client.units.list.query()).units.map((u) => u.name)).not.toContain("outside.service");
  });

  it("picks up a new matching unit file on daemon-reload, and drops it when the file is gone", async () => {
    const unit = "e2e-new.service";
    const m = agent.mark();
    await sb.writeFile(`/etc/systemd/system/${unit}`, "[Service]\nExecStart=/bin/sleep infinity\n");
    await sb.systemctl(["daemon-reload"]);
    await agent.waitFor(`${unit} to appear`, () => agent.events.slice(m).some((e) => e.kind === "unit" && e.unit.name === unit));
    expect((await agent.client.units.list.query()).units.find((u) => u.name === unit)).toMatchObject({ loadState: "loaded", activeState: "inactive" });
    await sb.removeFile(`/etc/systemd/system/${unit}`);
    await sb.systemctl(["daemon-reload"]);
    await agent.waitFor(`${unit} to be removed`, () => agent.events.slice(m).some((e) => e.kind === "unit-removed" && e.name === unit));
    expect((await agent.client.units.list.query()).units.map((u) => u.name)).not.toContain(unit);
  });

  it("reports not-found, masked and broken units with their LoadState", async () => {
    // e2e-missing.service is named in no file: only an explicit entry makes the agent track it
    const units = (await agent.client.units.list.query()).units;
    const load = Object.fromEntries(units.map((u) => [u.name, u.loadState]));
    expect(load["e2e-masked.service"]).toBe("masked");
    expect(load["e2e-broken.service"]).toBe("bad-setting");
    expect(load["e2e-slowpre.service"]).toBe("loaded");

    const masked = await agent.client.units.get.query({ name: "e2e-masked.service" });
    expect(masked.loadState).toBe("masked");
    expect(masked.unitFileState).toBe("masked");
    await expect(agent.client.units.start.mutate({ name: "e2e-masked.service" })).rejects.toThrow(/masked/);
    await expect(agent.client.units.start.mutate({ name: "e2e-broken.service" })).rejects.toThrow(/bad|invalid|setting/i);

    await expect(agent.client.units.start.mutate({ name: "e2e-missing.service" })).rejects.toThrow(/not found/);
  });

  it("units.get of names the globs match but no unit file has: not found, never loaded in systemd, never listed", async () => {
    const names = ["e2e-phantom-1.service", "e2e-phantom-2.service", "e2e-phantom-3.service", "e2e-phantom-4.service", "e2e-phantom-5.service"];
    const m = agent.mark();
    for (const name of names) await expect(agent.client.units.get.query({ name })).rejects.toThrow(/not known to systemd/);
    // a diagnosis of one (a viewer may ask for it) says so, and loads nothing either
    expect((await agent.client.units.diagnose.query({ name: names[0]! })).code).toBe("not-found");
    await sleep(500);
    const loaded = (await sb.systemctl(["list-units", "--all", "--plain", "--no-legend", "e2e-phantom-*"], { check: false })).stdout;
    expect(loaded.trim()).toBe("");
    expect((await agent.client.units.list.query()).units.map((u) => u.name).filter((n) => n.startsWith("e2e-phantom"))).toEqual([]);
    expect(agent.events.slice(m).filter((e) => e.kind === "unit" && e.unit.name.startsWith("e2e-phantom"))).toEqual([]);
  });
});
