/**
 * Start requests that did nothing (issue 12), on a real systemd 252 with the real agent inside the
 * sandbox: a start skipped because ExecCondition= exited 1, a start refused because a Requires=
 * unit is not installed, and a start job that ended "dependency". Before this, each of them read
 * "Not running and not started since systemd loaded it; nothing is wrong." The diagnosis must
 * say what happened to the last start request, checked against `systemctl show`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Diagnosis } from "../../server/contract/diagnosis";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "../systemd/agentHarness";

const skip = warnIfUnsupported("start requests e2e (e2e/diagnosis/startRequests.test.ts)");

const UNITS: Record<string, string> = {
  "sr-cond.service": `[Service]\nExecCondition=/bin/sh -c 'echo "no H200 on this host" >&2; exit 1'\nExecStart=/bin/sleep infinity\n`,
  "sr-missing.service": `[Unit]\nRequires=sr-not-installed.service\n[Service]\nExecStart=/bin/sleep infinity\n`,
  "sr-base.service": `[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo "models volume not mounted" >&2; exit 1'\n`,
  "sr-dep.service": `[Unit]\nRequires=sr-base.service\nAfter=sr-base.service\n[Service]\nExecStart=/bin/sleep infinity\n`,
};

describe.skipIf(skip)("start requests that did nothing, on real systemd", () => {
  let sb: Sandbox;
  let agent: RunningAgent;

  async function show(unit: string, props: string[]): Promise<Record<string, string>> {
    const r = await sb.systemctl(["show", `--property=${props.join(",")}`, unit]);
    return Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
  }

  async function diagnoseUntil(unit: string, code: Diagnosis["code"], timeoutMs = 10_000): Promise<Diagnosis> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const d = await agent.client.units.diagnose.query({ name: unit });
      if (d.code === code) return d;
      if (Date.now() > deadline) throw new Error(`${unit}: no "${code}" within ${timeoutMs} ms; last: ${d.code}: ${d.headline}\n${agent.debugTail()}`);
      await sleep(100);
    }
  }

  beforeAll(async () => {
    sb = await Sandbox.boot({ name: "start-requests" });
    for (const [name, text] of Object.entries(UNITS)) await sb.writeFile(`/etc/systemd/system/${name}`, text);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "sr-*.service" });
  });

  afterAll(async () => {
    await agent?.stop().catch(() => undefined);
    await sb?.stop();
  });

  it("ExecCondition exited 1: skipped, not failed, naming the command, its status and its output", async () => {
    const { jobId } = await agent.client.units.start.mutate({ name: "sr-cond.service" });
    expect(await agent.jobResult(jobId!)).toBe("done");
    const truth = await show("sr-cond.service", ["ActiveState", "Result", "ExecCondition"]);
    expect(truth).toMatchObject({ ActiveState: "inactive", Result: "exec-condition" });
    expect(truth.ExecCondition).toMatch(/code=exited ; status=1 }/);
    const d = await diagnoseUntil("sr-cond.service", "start-skipped");
    expect(d.severity).toBe("warning");
    expect(d.headline).toMatch(
      new RegExp(
        `^The last start \\(job #${jobId}, by agent-token, (<1|\\d+) s ago\\) was skipped, not failed: ExecCondition \`/bin/sh -c .*exit 1'?\` exited with status 1, so systemd did not run the service \\(Result=exec-condition\\)\\.$`,
      ),
    );
    expect(d.evidence.map((e) => e.value)).toContain("no H200 on this host");
    expect(d.nextStep?.action).toEqual({ kind: "start", unit: "sr-cond.service" });
  });

  it("a Requires= unit that is not installed: a start would be refused, and then it is, with systemd's message", async () => {
    const before = await diagnoseUntil("sr-missing.service", "start-refused");
    expect(before.headline).toBe(
      "Not running, and a start would be refused: sr-not-installed.service, which it requires (Requires=/BindsTo=), is not installed.",
    );
    const refused = await agent.client.units.start.mutate({ name: "sr-missing.service" }).catch((e: Error) => e.message);
    expect(refused).toBe("systemd refused start of sr-missing.service: Unit sr-not-installed.service not found.");
    expect(await show("sr-missing.service", ["ActiveState", "Job"])).toMatchObject({ ActiveState: "inactive", Job: "" });
    const d = await diagnoseUntil("sr-missing.service", "start-refused");
    expect(d.headline).toMatch(
      /^The last start \(by agent-token, (<1|\d+) s ago\) was refused by systemd: sr-not-installed\.service, which it requires \(Requires=\/BindsTo=\), is not installed \(`Unit sr-not-installed\.service not found\.`\); no job ran\.$/,
    );
    expect(d.nextStep?.text).toMatch(
      /^Install sr-not-installed\.service, or remove it from Requires=\/BindsTo= in \/etc\/systemd\/system\/sr-missing\.service/,
    );
  });

  it("a start job that ended 'dependency': the required unit that failed, by name", async () => {
    const { jobId } = await agent.client.units.start.mutate({ name: "sr-dep.service" });
    expect(await agent.jobResult(jobId!)).toBe("dependency");
    expect(await show("sr-base.service", ["ActiveState", "Result"])).toMatchObject({ ActiveState: "failed", Result: "exit-code" });
    const d = await diagnoseUntil("sr-dep.service", "dependency-failed");
    expect(d.headline).toMatch(
      /^Not started (<1|\d+) s ago because sr-base\.service, which it requires, failed \(result exit-code\); the problem is in that unit, not in this one\.$/,
    );
    expect(d.nextStep?.action).toEqual({ kind: "open-unit", unit: "sr-base.service" });
  });
});
