/**
 * Journal search and the unit file against a real systemd 252 with real journald (issue 24):
 * the agent runs inside the sandbox, the test asks it over its HTTP API as the panel does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { RunningAgent, sleep } from "../systemd/agentHarness";

const skip = warnIfUnsupported("journal search and unit files (e2e/journal/journalSearch.test.ts)");

const LOGGER = "e2e-jlog.service";
const FILED = "e2e-ufile.service";
// "<N>" prefixes set each line's priority (SyslogLevelPrefix=yes is systemd's default)
const LOGGER_UNIT = `[Service]
ExecStart=/bin/sh -c 'echo "<6>tick one"; echo "<3>ERROR CUDA Out Of Memory on GPU 0"; echo "<4>warning: slow start"; echo "<6>Loading weights"; exec sleep infinity'
`;
const FILED_UNIT = `[Unit]
Description=a unit with a drop-in
[Service]
Environment=OPENAI_API_KEY=sk-e2eFragmentSecret
ExecStart=/bin/sleep infinity
`;
const DROP_IN = `[Service]
Environment="A=1" "HF_TOKEN=hf_e2eDropInSecret"
`;

describe.skipIf(skip)("journal search and unit files on real systemd", () => {
  let sb: Sandbox;
  let agent: RunningAgent;
  let startedAt = 0;

  beforeAll(async () => {
    sb = await Sandbox.boot({ name: "journal" });
    await sb.writeFile(`/etc/systemd/system/${LOGGER}`, LOGGER_UNIT);
    await sb.writeFile(`/etc/systemd/system/${FILED}`, FILED_UNIT);
    await sb.writeFile(`/etc/systemd/system/${FILED}.d/10-env.conf`, DROP_IN);
    await sb.systemctl(["daemon-reload"]);
    agent = await RunningAgent.start(sb, { units: "e2e-*.service" });
    startedAt = Date.now() - 1000;
    await agent.client.units.start.mutate({ name: LOGGER, reason: "e2e" });
    // journald has the four lines
    for (let i = 0; i < 100; i++) {
      const lines = await agent.client.units.journal.query({ name: LOGGER, grep: "loading weights" });
      if (lines.length > 0) break;
      await sleep(100);
    }
  });

  afterAll(async () => {
    await agent?.stop().catch(() => undefined);
    await sb?.stop();
  });

  it("grep is case-insensitive, priority filters by severity, since/until by time", async () => {
    const hits = await agent.client.units.journal.query({ name: LOGGER, grep: "cuda out of memory" });
    expect(hits.map((e) => e.message)).toEqual(["ERROR CUDA Out Of Memory on GPU 0"]);
    expect(hits[0]!.priority).toBe(3);
    const regex = await agent.client.units.journal.query({ name: LOGGER, grep: "^(tick|loading) " });
    expect(regex.map((e) => e.message)).toEqual(["tick one", "Loading weights"]);

    const errs = await agent.client.units.journal.query({ name: LOGGER, priority: "err" });
    expect(errs.map((e) => e.message)).toEqual(["ERROR CUDA Out Of Memory on GPU 0"]);
    const warns = await agent.client.units.journal.query({ name: LOGGER, priority: 4 });
    expect(warns.map((e) => e.message)).toEqual(["ERROR CUDA Out Of Memory on GPU 0", "warning: slow start"]);

    const own = (l: { message: string }[]) => l.filter((e) => /tick one|CUDA|slow start|Loading weights/.test(e.message));
    expect(own(await agent.client.units.journal.query({ name: LOGGER, since: startedAt, until: Date.now() + 1000 }))).toHaveLength(4);
    expect(own(await agent.client.units.journal.query({ name: LOGGER, until: startedAt - 60_000 }))).toEqual([]);
    expect(own(await agent.client.units.journal.query({ name: LOGGER, since: Date.now() + 5000 }))).toEqual([]);
    expect(own(await agent.client.units.journal.query({ name: LOGGER, boot: 0, limit: 2 }))).toHaveLength(2);
    // "lines" is limit's older name; a unit outside the allow-list is refused before journalctl runs
    expect(await agent.client.units.journal.query({ name: LOGGER, lines: 1 })).toHaveLength(1);
    await expect(agent.client.units.journal.query({ name: "systemd-journald.service", grep: "x" })).rejects.toThrow(/allow-list/);
  });

  it("the histogram counts lines and errors per minute; the download is the range as text", async () => {
    const h = await agent.client.units.journalHistogram.query({ name: LOGGER, since: startedAt - 60_000, until: Date.now() + 1000 });
    expect(h.bucketMs).toBe(60_000);
    expect(h.lines.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(4);
    expect(h.errors.reduce((a, b) => a + b, 0)).toBe(1);
    const d = await agent.client.units.downloadJournal.query({ name: LOGGER, since: startedAt, priority: "warning" });
    expect(d.cut).toBe(false);
    expect(d.text).toMatch(/Z e2e-jlog\.service\[\d+\] <err>: ERROR CUDA Out Of Memory on GPU 0\n/);
    expect(d.text).toMatch(/<warning>: warning: slow start/);
    expect(d.text).not.toMatch(/tick one/);
  });

  it("the unit file with its drop-in, masked; NeedDaemonReload after the file changes on disk; an admin's reveal", async () => {
    const f = await agent.client.units.file.query({ name: FILED });
    expect(f.fragmentPath).toBe(`/etc/systemd/system/${FILED}`);
    expect(f.fragment).toContain("Description=a unit with a drop-in");
    expect(f.dropIns.map((d) => d.path)).toEqual([`/etc/systemd/system/${FILED}.d/10-env.conf`]);
    expect(f.needDaemonReload).toBe(false);
    const all = JSON.stringify(f);
    expect(all).not.toMatch(/sk-e2eFragmentSecret|hf_e2eDropInSecret/);
    expect(f.dropIns[0]!.text).toContain('"A=1" "HF_TOKEN=••••"');
    expect(f.effective).toContain("Environment=HF_TOKEN=••••");
    expect(f.effective).toContain("ExecStart=/bin/sleep infinity");

    await sb.writeFile(`/etc/systemd/system/${FILED}`, FILED_UNIT.replace("infinity", "3600"));
    const stale = await agent.client.units.file.query({ name: FILED });
    expect(stale.needDaemonReload).toBe(true);
    expect(stale.fragment).toContain("/bin/sleep 3600"); // the file as on disk …
    expect(stale.effective).toContain("ExecStart=/bin/sleep infinity"); // … and what systemd runs
    const d = await agent.client.units.diagnose.query({ name: FILED });
    expect(d.evidence[0]).toMatchObject({ label: "Unit file", value: expect.stringMatching(/file on disk differs from what systemd runs/) });

    const revealed = await agent.client.reveal.unitFile.query({ name: FILED });
    expect(revealed.dropIns[0]!.text).toContain("HF_TOKEN=hf_e2eDropInSecret");
    await sb.systemctl(["daemon-reload"]);
    expect((await agent.client.units.file.query({ name: FILED })).needDaemonReload).toBe(false);
  });
});
