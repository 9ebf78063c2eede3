import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createCallerFactory, type Context } from "../trpc";
import { GpuAttributor } from "./gpu/attribution";
import { Hub } from "./hub/hub";
import { bucketMsFor } from "./journalQueries";
import { createAgentRouter } from "./router";
import { SampleHistory } from "./sampleHistory";
import { createSimulatedHost } from "./simulator/index";

const admin: Context = { actor: { user: "alice", role: "admin", unitPatterns: [] } };
const viewer: Context = { actor: { user: "val", role: "viewer", unitPatterns: [] } };
const UNIT = "vllm-embed-small.service";

async function setup() {
  const globs = ["vllm-*.service"];
  const host = createSimulatedHost({ unitGlobs: globs, gpuIntervalMs: 100, timing: { speed: 20 } });
  const hub = new Hub(host, new GpuAttributor(host.procs), new SampleHistory());
  await hub.start();
  const shutdown = new AbortController();
  const router = createAgentRouter({ hub, unitGlobs: globs, shutdown: shutdown.signal });
  return { host, hub, shutdown, caller: createCallerFactory(router)(admin), asViewer: createCallerFactory(router)(viewer) };
}

describe("units.journal with filters, histogram, download, file (simulated host)", () => {
  let s: Awaited<ReturnType<typeof setup>>;
  beforeEach(async () => {
    s = await setup();
    await s.caller.units.stop({ name: UNIT }); // writes a few lines
    await vi.waitFor(async () => expect((await s.caller.units.journal({ name: UNIT, limit: 5 })).length).toBeGreaterThanOrEqual(2), { timeout: 5000 });
  });
  afterEach(async () => {
    s.shutdown.abort();
    await s.hub.close();
  });

  it("grep is case-insensitive; priority, time range and limit filter; lines is an alias of limit", async () => {
    const all = await s.caller.units.journal({ name: UNIT, limit: 5000 });
    expect(all.length).toBeGreaterThan(1);
    const word = /\b([A-Za-z]{5,})\b/.exec(all.at(-1)!.message)![1]!;
    const hits = await s.caller.units.journal({ name: UNIT, grep: word.toUpperCase() });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((e) => e.message.toLowerCase().includes(word.toLowerCase()))).toBe(true);
    expect(await s.caller.units.journal({ name: UNIT, lines: 1 })).toHaveLength(1);
    const last = all.at(-1)!;
    const after = await s.caller.units.journal({ name: UNIT, since: Math.floor(last.atUsec / 1000) + 1 });
    expect(after.every((e) => e.atUsec > last.atUsec)).toBe(true);
    const errs = await s.caller.units.journal({ name: UNIT, priority: "err", since: 0 });
    expect(errs.every((e) => e.priority <= 3)).toBe(true);
    expect(await s.caller.units.journal({ name: UNIT, boot: -1, since: 0 })).toEqual([]);
    await expect(s.caller.units.journal({ name: "sshd.service", grep: "x" })).rejects.toThrow(/allow-list/);
  });

  it("histogram: lines per minute over the range, errors apart", async () => {
    const now = Date.now();
    const h = await s.caller.units.journalHistogram({ name: UNIT, since: now - 10 * 60_000, until: now });
    expect(h.bucketMs).toBe(60_000);
    expect(h.lines).toHaveLength(h.errors.length);
    const all = await s.caller.units.journal({ name: UNIT, since: now - 10 * 60_000, until: now, limit: 5000 });
    expect(h.lines.reduce((a, b) => a + b, 0)).toBe(all.length);
    expect(h.partial).toBe(false);
    expect(bucketMsFor(24 * 3600_000)).toBe(60_000);
    expect(bucketMsFor(7 * 24 * 3600_000)).toBe(7 * 60_000);
  });

  it("download: the range as text, one line per entry", async () => {
    const d = await s.caller.units.downloadJournal({ name: UNIT, since: 0 });
    expect(d.cut).toBe(false);
    expect(d.text.split("\n").filter((l) => l.includes(UNIT)).length).toBe(d.lines);
    expect(d.text).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("unit file: masked for everyone; the admin's reveal has the secrets; a viewer's reveal is refused", async () => {
    const f = await s.asViewer.units.file({ name: UNIT });
    expect(f.fragmentPath).toBe(`/etc/systemd/system/${UNIT}`);
    expect(JSON.stringify(f)).not.toMatch(/hf_simulated|sk-simulated/);
    expect(f.dropIns[0]!.text).toContain('"OPENAI_API_KEY=••••"');
    const r = await s.caller.reveal.unitFile({ name: UNIT });
    expect(r.fragment).toContain("HF_TOKEN=hf_simulatedDemoToken");
    await expect(s.asViewer.reveal.unitFile({ name: UNIT })).rejects.toThrow(/Only admins/);
  });
});

describe("the diagnosis says when the file on disk differs from what systemd runs", () => {
  it("NeedDaemonReload puts a unit-file fact first", async () => {
    const s = await setup();
    try {
      expect((await s.caller.units.diagnose({ name: UNIT })).evidence.some((e) => e.label === "Unit file")).toBe(false);
      (s.host.systemd as unknown as { staleFiles: Set<string> }).staleFiles.add(UNIT);
      await new Promise((r) => setTimeout(r, 3100)); // past the diagnosis cache
      const d = await s.caller.units.diagnose({ name: UNIT });
      expect(d.evidence[0]).toMatchObject({ label: "Unit file", value: expect.stringMatching(/file on disk differs from what systemd runs/) });
      expect((await s.caller.units.file({ name: UNIT })).needDaemonReload).toBe(true);
    } finally {
      s.shutdown.abort();
      await s.hub.close();
    }
  });
});
