/**
 * Opt-in self-healing (issue 23 part 5) on a real systemd 252 with the real agent inside the
 * sandbox: a stub vLLM (e2e/fakes/fake-engine) serves, then its /health answers 503 while its
 * process stays up (systemd: active/running). With `healAfter = "3s"` the agent restarts it by
 * itself, once, GPU-aware, as `gpudeck (self-heal)` with the probe failures as the reason; the
 * engine serves again and the unit says so. Its second start carries "ready in about …" from the
 * first (issue 23 part 6).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Operation } from "../../server/contract/operations";
import type { Readiness } from "../../server/contract/readiness";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { freePort, REPO_ROOT, RunningAgent } from "../systemd/agentHarness";

const skip = warnIfUnsupported("self-heal e2e (e2e/selfHeal/selfHeal.test.ts)");

const FAKE = `${REPO_ROOT}e2e/fakes/fake-engine`;
const LOGS = `${REPO_ROOT}e2e/fakes/engine-logs`;
const UNIT = "sh-vllm.service";

describe.skipIf(skip)("self-heal under real systemd", () => {
  let sb: Sandbox;
  let agent: RunningAgent;

  const readinessOf = (since = 0): Readiness[] => agent.events.slice(since).flatMap((e) => (e.kind === "readiness" && e.unit === UNIT ? [e.readiness] : []));
  const operations = (since = 0): Operation[] =>
    agent.events.slice(since).flatMap((e) => (e.kind === "operation" && e.operation.unit === UNIT ? [e.operation] : []));

  beforeAll(async () => {
    const port = await freePort();
    sb = await Sandbox.boot({ name: "selfheal" });
    await sb.writeFile("/usr/local/bin/vllm", `#!/bin/sh\nexec ${process.execPath} ${FAKE} vllm "$@"\n`, "0755");
    await sb.writeFile(
      `/etc/systemd/system/${UNIT}`,
      `[Service]\nEnvironment=FAKE_ENGINE_LOG=${LOGS}/vllm-wedge.log FAKE_ENGINE_ONCE_FILE=/run/wedged-vllm\nExecStart=/usr/local/bin/vllm serve /models/tiny-llama --port ${port}\n`,
    );
    await sb.writeFile(
      "/etc/systemd/system/sh-other.service",
      `[Service]\nEnvironment=FAKE_ENGINE_LOG=${LOGS}/vllm-wedge.log FAKE_ENGINE_ONCE_FILE=/run/wedged-other\nExecStart=/usr/local/bin/vllm serve /m --port ${await freePort()}\n`,
    );
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "sh-*.service", env: { GPUDECK_READINESS: JSON.stringify({ [UNIT]: { healAfter: "3s" } }) } });
  });

  afterAll(async () => {
    await agent?.stop().catch(() => undefined);
    await sb?.stop();
  });

  it("a serving engine whose probe fails for healAfter is restarted once by the agent and serves again", async () => {
    const mark = agent.mark();
    await agent.client.units.start.mutate({ name: UNIT });
    await agent.waitFor("serving", () => readinessOf(mark).some((r) => r.state === "serving"), 30_000);
    const wedged = await agent.waitFor("not serving (503)", () => readinessOf(mark).find((r) => r.state === "not-serving"), 30_000);
    expect(wedged.probe).toMatchObject({ ok: false, status: 503 });
    // still active for systemd: only the probe says it is wedged
    expect((await agent.client.units.get.query({ name: UNIT })).activeState).toBe("active");

    const started = await agent.waitFor("the self-heal restart started", () => operations(mark).find((o) => o.step === "started"), 30_000);
    expect(started).toMatchObject({ kind: "restart", user: "gpudeck (self-heal)" });
    expect(started.reason).toMatch(/^self-heal: its readiness probe failed for \d+ s \(\d+ in a row since \d\d:\d\d:\d\d UTC, last: \/health answered 503\)$/);
    expect(started.steps.map((s) => s.step)).toEqual(["stopping", "waiting-for-gpus", "starting", "started"]);
    const restartedAt = started.createdAtMs;
    // healAfter counts from the first failed probe (the engine was still called serving then)
    const firstFailure = readinessOf(mark).find(
      (r) => r.probe && !r.probe.ok && r.probe.atMs > (readinessOf(mark).find((x) => x.state === "serving")?.sinceMs ?? 0),
    );
    expect(restartedAt - firstFailure!.probe!.atMs).toBeGreaterThanOrEqual(3000);

    // the second start knows the first: while it loads, an estimate; then it serves again
    const afterMark = agent.events.length;
    await agent.waitFor("serving again", () => readinessOf(afterMark).some((r) => r.state === "serving"), 30_000);
    const loading = readinessOf(afterMark).filter((r) => r.state === "loading");
    expect(loading.some((r) => typeof r.estimatedReadyAtMs === "number" && r.estimatedReadyAtMs > r.sinceMs)).toBe(true);

    const unit = await agent.waitFor(
      "the marker says it came back",
      () => {
        const u = agent.events.flatMap((e) => (e.kind === "unit" && e.unit.name === UNIT ? [e.unit] : [])).at(-1);
        return u?.selfHeal?.state === "back" ? u : undefined;
      },
      15_000,
    );
    expect(unit.selfHeal).toMatchObject({ operationId: started.id, inLastHour: 1, max: 2 });
    expect(unit.selfHeal!.message).toMatch(/^gpudeck restarted it by itself at \d\d:\d\d:\d\d UTC \(self-heal\); it serves again since /);

    // the stop and the start are the action log's (and the timeline's), as gpudeck (self-heal)
    const actions = (await agent.client.units.timeline.query({ name: UNIT })).actions.filter((a) => a.user === "gpudeck (self-heal)");
    expect(actions.map((a) => a.action)).toEqual(["stop", "start"]);

    // once: serving on, no second operation
    await new Promise((r) => setTimeout(r, 4000));
    expect(new Set(operations(mark).map((o) => o.id)).size).toBe(1);
    expect((await agent.client.units.get.query({ name: UNIT })).readiness?.state).toBe("serving");
  }, 120_000);

  it("off unless configured: a unit without healAfter whose engine wedges is left alone", async () => {
    const mark = agent.mark();
    const other = (state: string) => () =>
      agent.events.slice(mark).some((e) => e.kind === "readiness" && e.unit === "sh-other.service" && e.readiness.state === state);
    await sb.systemctl(["start", "sh-other.service"]);
    await agent.waitFor("sh-other serving", other("serving"), 30_000);
    await agent.waitFor("sh-other not serving", other("not-serving"), 30_000);
    await new Promise((r) => setTimeout(r, 5000)); // more than the other unit's healAfter
    expect(agent.events.slice(mark).some((e) => e.kind === "operation" && e.operation.unit === "sh-other.service")).toBe(false);
  }, 60_000);
});
