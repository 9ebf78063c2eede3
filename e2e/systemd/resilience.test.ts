/**
 * The agent keeps telling the truth when its D-Bus connection breaks: dbus-daemon stopped or
 * restarted, systemd re-executed. It reports "unreachable" meanwhile, keeps serving, reconnects,
 * and reports every transition exactly once, at systemd's own timestamps. And when the agent
 * itself restarts, the history it had comes back from its store, and what happened while it
 * was away is rebuilt from systemd's timestamps.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "./agentHarness";

const skip = warnIfUnsupported("systemd adapter resilience (e2e/systemd/resilience.test.ts)");

const SLOW_START = `[Service]
ExecStartPre=/bin/sleep 1.5
ExecStart=/bin/sleep infinity
`;
const UNIT_NAMES = ["e2e-busgap.service", "e2e-busrestart.service", "e2e-reexec.service", "e2e-agentgap.service"];

describe.skipIf(skip)("agent + real systemd: bus and systemd restarts", () => {
  let sb: Sandbox;
  let agent: RunningAgent;

  beforeAll(async () => {
    sb = await Sandbox.boot({ name: "resilience" });
    for (const name of UNIT_NAMES) await sb.writeFile(`/etc/systemd/system/${name}`, SLOW_START);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "e2e-*.service" });
  });

  afterAll(async () => {
    await agent?.stop().catch(() => undefined);
    await sb?.stop();
  });

  /** systemd's own value of a timestamp property, in µs (read over the bus inside the sandbox). */
  async function systemdUsec(unit: string, property: string): Promise<number> {
    const r = await sb.exec(["systemctl", "show", `--property=${property}Monotonic`, "--property=" + property, "--timestamp=us+utc", unit]);
    const mono = /Monotonic=(\d+)/.exec(r.stdout);
    const wall = new RegExp(`^${property}=\\w+ (\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{6}) UTC$`, "m").exec(r.stdout);
    if (!mono || !wall) throw new Error(`cannot read ${property} of ${unit}: ${r.stdout}`);
    const [date, frac] = wall[1]!.split(".");
    return Date.parse(`${date!.replace(" ", "T")}Z`) * 1000 + Number(frac);
  }

  async function isActive(unit: string): Promise<boolean> {
    return (await sb.systemctl(["is-active", unit], { check: false })).stdout.trim() === "active";
  }

  it("dbus-daemon down while the unit leaves start-pre: unreachable, still serving, then the missed transition once", async () => {
    const unit = "e2e-busgap.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    await agent.reaches(unit, "activating/start-pre", m);

    await sb.systemctl(["stop", "dbus.socket", "dbus.service"]);
    await agent.waitFor("systemd status unreachable", () => agent.systemdStates(m).includes("unreachable"));

    // still serving: the last known state, with the reason; actions refused with a clear error
    const listed = await agent.client.units.list.query();
    expect(listed.systemd.state).toBe("unreachable");
    expect(listed.units.find((u) => u.name === unit)?.subState).toBe("start-pre");
    await expect(agent.client.units.stop.mutate({ name: unit })).rejects.toThrow(/unreachable/);
    const cached = await agent.client.units.get.query({ name: unit });
    expect(cached.subState).toBe("start-pre");

    // the transition happens while nobody can see it
    const deadline = Date.now() + 10_000;
    while (!(await isActive(unit))) {
      if (Date.now() > deadline) throw new Error(`${unit} never became active`);
      await sleep(50);
    }
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre"]);
    await sb.systemctl(["start", "dbus.socket", "dbus.service"]);

    await agent.reaches(unit, "active/running", m, 20_000);
    await agent.waitFor("systemd status ok", () => agent.systemdStatus() === "ok", 20_000);
    // the job ended during the gap: its result comes from systemd's journal
    expect(await agent.jobResult(jobId!)).toBe("done");
    await sleep(300);
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
    const running = agent.transitions(unit, m).at(-1)!;
    expect(running.atUsec).toBe(await systemdUsec(unit, "ActiveEnterTimestamp"));
    expect(running.mainPid).toBeGreaterThan(0);
    // (status events also come for telemetry changes, so an "ok" may precede the gap)
    const states = agent.systemdStates(m);
    expect(states).toContain("unreachable");
    expect(states.slice(states.indexOf("unreachable"))).toContain("ok");
    expect(states.at(-1)).toBe("ok");
    expect(states.every((s) => ["unreachable", "connecting", "ok"].includes(s))).toBe(true);
    // nothing else was reported twice for the other units either
    for (const other of UNIT_NAMES.filter((n) => n !== unit)) expect(agent.sequence(other, m)).toEqual([]);
  });

  it("systemctl restart dbus during start-pre: no transition lost or repeated", async () => {
    const unit = "e2e-busrestart.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    await agent.reaches(unit, "activating/start-pre", m);
    await sb.systemctl(["restart", "dbus.service"]);
    expect(await agent.jobResult(jobId!, 20_000)).toBe("done");
    await agent.waitFor("systemd status ok", () => agent.systemdStatus() === "ok", 20_000);
    await sleep(300);
    expect(agent.systemdStates(m)).toContain("unreachable");
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
    expect(agent.transitions(unit, m).at(-1)!.atUsec).toBe(await systemdUsec(unit, "ActiveEnterTimestamp"));
  });

  it("systemctl daemon-reexec during start-pre: systemd leaves and rejoins the bus, nothing lost or repeated", async () => {
    const unit = "e2e-reexec.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit });
    await agent.reaches(unit, "activating/start-pre", m);
    await sb.systemctl(["daemon-reexec"]);
    expect(await agent.jobResult(jobId!, 20_000)).toBe("done");
    // systemd hands its bus name over (old unique name → new one) or drops and retakes it
    await agent.waitFor("systemd status ok", () => agent.systemdStatus() === "ok", 20_000);
    await sleep(300);
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);
    expect(agent.transitions(unit, m).at(-1)!.atUsec).toBe(await systemdUsec(unit, "ActiveEnterTimestamp"));
    // and the agent still acts after the re-exec
    const stop = await agent.client.units.stop.mutate({ name: unit });
    expect(await agent.jobResult(stop.jobId!)).toBe("done");
    for (const other of UNIT_NAMES.filter((n) => n !== unit)) expect(agent.sequence(other, m)).toEqual([]);
  });

  it("agent restart: the timeline and actions come back from the store; a restart while it was away is rebuilt", async () => {
    const unit = "e2e-agentgap.service";
    const m = agent.mark();
    const { jobId } = await agent.client.units.start.mutate({ name: unit, reason: "before the agent restart" });
    expect(await agent.jobResult(jobId!, 20_000)).toBe("done");
    const before = await agent.client.units.timeline.query({ name: unit });
    expect(agent.sequence(unit, m)).toEqual(["inactive/dead → activating/start-pre", "activating/start-pre → active/running"]);

    await agent.stop();
    // while no agent watches: the unit is restarted (stop, start-pre, running again)
    await sb.systemctl(["restart", unit]);
    agent = await RunningAgent.start(sb, { units: "e2e-*.service" });
    expect(await (await fetch(`${agent.url}/healthz`)).json()).toMatchObject({ ok: true, history: "disk" });

    const after = await agent.client.units.timeline.query({ name: unit });
    const text = (ts: typeof after.transitions) =>
      ts.map((t) => `${t.from ? `${t.from.activeState}/${t.from.subState}` : "∅"} → ${t.to.activeState}/${t.to.subState}`);
    // everything the first run saw, unchanged, with systemd's timestamps
    expect(after.transitions.slice(0, before.transitions.length)).toEqual(before.transitions);
    // then the restart, step by step at systemd's timestamps (substates between were not observed)
    const gap = after.transitions.slice(before.transitions.length);
    expect(text(gap)).toEqual(["active/running → deactivating/", "deactivating/ → inactive/", "inactive/ → activating/", "activating/ → active/running"]);
    expect(gap.map((t) => t.atUsec)).toEqual([
      await systemdUsec(unit, "ActiveExitTimestamp"),
      await systemdUsec(unit, "InactiveEnterTimestamp"),
      await systemdUsec(unit, "InactiveExitTimestamp"),
      await systemdUsec(unit, "ActiveEnterTimestamp"),
    ]);
    // and the span no agent watched, around the restart
    expect(after.unobserved).toHaveLength(1);
    expect(after.unobserved[0]!.fromMs * 1000).toBeLessThanOrEqual(gap[0]!.atUsec);
    expect(after.unobserved[0]!.toMs * 1000).toBeGreaterThanOrEqual(gap.at(-1)!.atUsec);
    // the action of the first run, with its reason and result
    expect(after.actions).toMatchObject([{ action: "start", reason: "before the agent restart", outcome: "done", jobId }]);
  });
});
