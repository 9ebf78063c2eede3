import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createCallerFactory, type Context } from "../trpc";
import { GpuAttributor } from "./gpu/attribution";
import { SampleHistory } from "./sampleHistory";
import { Hub } from "./hub/hub";
import { type AgentEvent } from "../contract/events";
import { createAgentRouter } from "./router";
import { createSimulatedHost } from "./simulator/index";

const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };

async function setup(globs = ["vllm-*.service"]) {
  // speed 20: a restart of the big unit takes well under a second
  const host = createSimulatedHost({ unitGlobs: globs, gpuIntervalMs: 100, timing: { speed: 20 } });
  const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
  await hub.start();
  const shutdown = new AbortController();
  const router = createAgentRouter({ hub, unitGlobs: globs, shutdown: shutdown.signal });
  const caller = createCallerFactory(router)(admin);
  return { host, hub, router, caller, shutdown };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** Collect events from events.watch until `until` says stop (or a timeout). */
async function collect(s: Setup, input: { lastEventId?: string | null } | undefined, until: (e: AgentEvent[]) => boolean, timeoutMs = 5000) {
  const ctl = new AbortController();
  const caller = createCallerFactory(s.router)(admin, { signal: ctl.signal });
  const iterable = await caller.events.watch(input);
  const got: { id: string; data: AgentEvent }[] = [];
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    // createCaller hands out tracked() envelopes as they are: [id, data, marker]
    for await (const item of iterable as AsyncIterable<unknown>) {
      const [id, data] = item as [string, AgentEvent];
      got.push({ id, data });
      if (until(got.map((g) => g.data))) break;
    }
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
  return got;
}

describe("agent router (simulated host)", () => {
  let s: Setup;
  beforeEach(async () => {
    s = await setup();
  });
  afterEach(async () => {
    s.shutdown.abort();
    await s.hub.close();
  });

  it("a journal stream resumed after a line first sends what came after it (long cursors accepted)", async () => {
    await s.caller.units.stop({ name: "vllm-embed-small.service" }); // writes a few lines
    await vi.waitFor(async () => expect((await s.caller.units.journal({ name: "vllm-embed-small.service", lines: 5 })).length).toBeGreaterThanOrEqual(3), {
      timeout: 5000,
    });
    const backlog = await s.caller.units.journal({ name: "vllm-embed-small.service", lines: 5 });
    const ctl = new AbortController();
    const caller = createCallerFactory(s.router)(admin, { signal: ctl.signal });
    const from = backlog.at(-3)!;
    const lines = await caller.units.followJournal({ name: "vllm-embed-small.service", lastEventId: from.cursor });
    const got: string[] = [];
    for await (const item of lines as AsyncIterable<unknown>) {
      got.push((item as [string, { cursor: string }])[0]);
      if (got.length === 2) break;
    }
    ctl.abort();
    expect(got).toEqual(backlog.slice(-2).map((l) => l.cursor));
    // a real journald cursor is ~150 characters; the schema must take it
    const real = "s=0f1e2d3c4b5a69788796a5b4c3d2e1f0;i=1a2b;b=0123456789abcdef0123456789abcdef;m=1234567890;t=61f2a3b4c5d6e;x=fedcba9876543210";
    const c2 = new AbortController();
    const resumed = await createCallerFactory(s.router)(admin, { signal: c2.signal }).units.followJournal({
      name: "vllm-embed-small.service",
      lastEventId: real,
    });
    c2.abort();
    await (resumed as AsyncIterable<unknown>)[Symbol.asyncIterator]().return?.();
  });

  it("streams that end leave no listener behind on the agent's shutdown signal", async () => {
    const before = getEventListeners(s.shutdown.signal, "abort").length;
    for (let i = 0; i < 12; i++) await collect(s, undefined, (e) => e.length >= 1);
    for (let i = 0; i < 3; i++) {
      const ctl = new AbortController();
      const caller = createCallerFactory(s.router)(admin, { signal: ctl.signal });
      const lines = await caller.units.followJournal({ name: "vllm-embed-small.service" });
      const it = (lines as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      setTimeout(() => ctl.abort(), 20);
      await it.next().catch(() => undefined);
      await it.return?.();
    }
    expect(getEventListeners(s.shutdown.signal, "abort").length).toBe(before);
  });

  it("lists the allowed units with ActiveState and SubState", async () => {
    const { units, systemd } = await s.caller.units.list();
    expect(systemd.state).toBe("ok");
    const byName = Object.fromEntries(units.map((u) => [u.name, u]));
    expect(Object.keys(byName).sort()).toEqual(["vllm-embed-small.service", "vllm-kimi-k25.service", "vllm-llama-70b.service", "vllm-qwen-draft.service"]);
    expect(byName["vllm-kimi-k25.service"]).toMatchObject({ activeState: "active", subState: "running" });
    expect(byName["vllm-llama-70b.service"]).toMatchObject({ activeState: "failed", subState: "failed", result: "exit-code" });
  });

  it("gets a unit's detail with its ExecStartPre and processes", async () => {
    const d = await s.caller.units.get({ name: "vllm-kimi-k25.service" });
    expect(d.execStartPre[0]!.argv.join(" ")).toContain("nvidia-smi --query-gpu=memory.used");
    expect(d.mainPid).toBeGreaterThan(0);
    expect(d.processes.length).toBe(9); // API server + 8 tensor-parallel workers
    expect(d.timeoutStartUsec).toBe(600_000_000);
  });

  it.each([
    ["--help", /must not start with '-'/],
    ["-H evil.service", /must not start with '-'/],
    ["a;b", /may only contain/],
    ["", /empty/],
    ["$(id).service", /may only contain/],
    ["../x.service", /must not start with '.'/],
    ["vllm-kimi-k25.service\n", /may only contain/],
    ["x".repeat(300) + ".service", /longer than 255/],
  ])("refuses the unit name %j before anything runs", async (name, message) => {
    const act = vi.spyOn(s.host.systemd, "act");
    await expect(s.caller.units.restart({ name })).rejects.toThrow(message);
    await expect(s.caller.units.get({ name })).rejects.toThrow(message);
    expect(act).not.toHaveBeenCalled();
  });

  it("refuses a unit outside GPUDECK_UNITS, and records the refusal", async () => {
    const act = vi.spyOn(s.host.systemd, "act");
    await expect(s.caller.units.stop({ name: "ssh.service" })).rejects.toThrow(/not in this agent's allow-list/);
    expect(act).not.toHaveBeenCalled();
  });

  it("reports an allowed but unknown unit as not found", async () => {
    await expect(s.caller.units.get({ name: "vllm-nope.service" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(s.caller.units.start({ name: "vllm-nope.service" })).rejects.toThrow(/not found/);
  });

  it("refuses extra input fields and oversized reasons", async () => {
    await expect(s.caller.units.restart({ name: "vllm-kimi-k25.service", reason: "x".repeat(501) })).rejects.toThrow(/longer than 500/);
    // @ts-expect-error: unknown field
    await expect(s.caller.units.restart({ name: "vllm-kimi-k25.service", mode: "isolate" })).rejects.toThrow();
  });

  it("restart returns a job id at once and streams the real sequence to the job's end", async () => {
    const before = await collect(s, undefined, (e) => e.length >= 1);
    expect(before[0]!.data.kind).toBe("snapshot");
    const t0 = Date.now();
    const { jobId } = await s.caller.units.restart({ name: "vllm-kimi-k25.service", reason: "test" });
    expect(Date.now() - t0).toBeLessThan(100); // queued, not waited for
    expect(jobId).toEqual(expect.any(Number));
    const events = await collect(s, { lastEventId: before[0]!.id }, (e) =>
      e.some((x) => x.kind === "action" && x.action.jobId === jobId && x.action.outcome !== null),
    );
    const seq = events
      .map((e) => e.data)
      .filter((e): e is Extract<AgentEvent, { kind: "transition" }> => e.kind === "transition" && e.transition.unit === "vllm-kimi-k25.service")
      .map((e) => `${e.transition.to.activeState}/${e.transition.to.subState}`);
    expect(seq).toEqual(["deactivating/stop-sigterm", "inactive/dead", "activating/start-pre", "active/running"]);
    const finished = events.map((e) => e.data).find((e) => e.kind === "job" && e.job.jobId === jobId && e.job.phase === "finished");
    expect(finished).toMatchObject({ job: { result: "done", jobType: "restart" } });
    const action = events
      .map((e) => e.data)
      .filter((e) => e.kind === "action")
      .at(-1);
    expect(action).toMatchObject({ action: { user: "alice", reason: "test", outcome: "done", jobId } });
  });

  it("each action returns without waiting: start, stop, reset-failed, kill", async () => {
    expect((await s.caller.units.stop({ name: "vllm-embed-small.service" })).jobId).toEqual(expect.any(Number));
    expect((await s.caller.units.start({ name: "vllm-llama-70b.service" })).jobId).toEqual(expect.any(Number));
    expect((await s.caller.units.resetFailed({ name: "vllm-llama-70b.service" })).jobId).toBeNull();
    expect((await s.caller.units.kill({ name: "vllm-kimi-k25.service" })).jobId).toBeNull();
    const tl = await s.caller.units.timeline({ name: "vllm-kimi-k25.service" });
    expect(tl.actions.map((a) => a.action)).toEqual(["kill"]);
  });

  it("a killed unit's memory shows as held by an exited process, and a restart waits in start-pre", async () => {
    // attribution can only name a holder it has seen alive: wait for one sample with it
    await collect(s, { lastEventId: s.hub.currentEventId() }, (e) =>
      e.some((x) => x.kind === "gpu" && x.sample.gpus.some((g) => g.holders.some((h) => h.kind === "unit" && h.unit === "vllm-kimi-k25.service"))),
    );
    await s.caller.units.kill({ name: "vllm-kimi-k25.service" });
    const events = await collect(s, { lastEventId: s.hub.currentEventId() }, (e) =>
      e.some((x) => x.kind === "gpu" && x.sample.gpus.some((g) => g.holders.some((h) => h.kind === "exited" && h.unit === "vllm-kimi-k25.service"))),
    );
    expect(events.length).toBeGreaterThan(0);
    const mark = s.hub.currentEventId();
    const { jobId } = await s.caller.units.restart({ name: "vllm-kimi-k25.service" });
    const after = await collect(s, { lastEventId: mark }, (e) => e.some((x) => x.kind === "job" && x.job.jobId === jobId && x.job.phase === "finished"));
    const states = after
      .map((e) => e.data)
      .flatMap((e) => (e.kind === "transition" && e.transition.unit === "vllm-kimi-k25.service" ? [e.transition.to.subState] : []));
    expect(states).toEqual(["start-pre", "running"]);
  });

  it("replays after a known event id and sends a snapshot for another boot's id", async () => {
    const first = await collect(s, undefined, (e) => e.length >= 1);
    await s.caller.units.stop({ name: "vllm-embed-small.service" });
    const replay = await collect(s, { lastEventId: first[0]!.id }, (e) => e.some((x) => x.kind === "transition"));
    expect(replay[0]!.data.kind).not.toBe("snapshot");
    const ids = replay.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    const foreign = await collect(s, { lastEventId: "deadbeef-12" }, (e) => e.length >= 1);
    expect(foreign[0]!.data.kind).toBe("snapshot");
  });

  it("timeline returns systemd-timestamped transitions", async () => {
    await s.caller.units.stop({ name: "vllm-embed-small.service" });
    await new Promise((r) => setTimeout(r, 200));
    const tl = await s.caller.units.timeline({ name: "vllm-embed-small.service" });
    const subs = tl.transitions.map((t) => t.to.subState);
    expect(subs).toEqual(["running", "stop-sigterm", "dead"]);
    for (let i = 1; i < tl.transitions.length; i++) expect(tl.transitions[i]!.atUsec).toBeGreaterThanOrEqual(tl.transitions[i - 1]!.atUsec);
  });

  it("journal returns the unit's lines", async () => {
    const lines = await s.caller.units.journal({ name: "vllm-llama-70b.service", lines: 50 });
    expect(lines.some((l) => l.message.includes("No such file or directory"))).toBe(true);
  });
});

describe("agent without GPUDECK_UNITS", () => {
  it("controls nothing and says how to set it", async () => {
    const s = await setup([]);
    try {
      expect((await s.caller.units.list()).units).toEqual([]);
      await expect(s.caller.units.restart({ name: "vllm-kimi-k25.service" })).rejects.toThrow(/set GPUDECK_UNITS/);
    } finally {
      s.shutdown.abort();
      await s.hub.close();
    }
  });
});

describe("units.diagnose (simulated incident)", () => {
  it("says a restarted unit waits for GPU memory held by its exited processes, then that it is healthy", async () => {
    const s = await setup();
    try {
      const kimi = "vllm-kimi-k25.service";
      await collect(s, { lastEventId: s.hub.currentEventId() }, (e) =>
        e.some((x) => x.kind === "gpu" && x.sample.gpus.some((g) => g.holders.some((h) => h.unit === kimi && h.kind === "unit"))),
      );
      expect((await s.caller.units.diagnose({ name: kimi })).code).toBe("healthy");
      await s.caller.units.kill({ name: kimi });
      const mark = s.hub.currentEventId();
      await s.caller.units.restart({ name: kimi });
      await collect(s, { lastEventId: mark }, (e) => e.filter((x) => x.kind === "gpu").length >= 3);
      const waiting = await s.caller.units.diagnose({ name: kimi });
      expect(waiting.code).toBe("waiting-gpu-exited");
      expect(waiting.headline).toMatch(/ExecStartPre/);
      expect(waiting.headline).toMatch(/GiB/);
      expect(waiting.headline).toMatch(/exited process/);
      await collect(s, { lastEventId: s.hub.currentEventId() }, (e) =>
        e.some((x) => x.kind === "transition" && x.transition.unit === kimi && x.transition.to.subState === "running"),
      );
      expect((await s.caller.units.diagnose({ name: kimi })).code).toBe("healthy");
    } finally {
      s.shutdown.abort();
      await s.hub.close();
    }
  });
});

describe("simulator follows systemd 252 where e2e/systemd measured it", () => {
  it("a restart during start-pre merges into the running job and fails the killed ExecStartPre first", async () => {
    const s = await setup();
    try {
      const kimi = "vllm-kimi-k25.service";
      const killed = s.hub.currentEventId();
      await s.caller.units.kill({ name: kimi });
      await collect(s, { lastEventId: killed }, (e) =>
        e.some((x) => x.kind === "transition" && x.transition.unit === kimi && x.transition.to.activeState === "failed"),
      );
      const mark = s.hub.currentEventId();
      const first = await s.caller.units.restart({ name: kimi });
      const second = await s.caller.units.restart({ name: kimi });
      expect(second.jobId).toBe(first.jobId);
      const events = await collect(s, { lastEventId: mark }, (e) =>
        e.some((x) => x.kind === "transition" && x.transition.unit === kimi && x.transition.to.subState === "running"),
      );
      const seq = events.flatMap((e) =>
        e.data.kind === "transition" && e.data.transition.unit === kimi ? [`${e.data.transition.to.activeState}/${e.data.transition.to.subState}`] : [],
      );
      expect(seq).toEqual(["activating/start-pre", "deactivating/stop-sigterm", "failed/failed", "activating/start-pre", "active/running"]);
    } finally {
      s.shutdown.abort();
      await s.hub.close();
    }
  });
});
