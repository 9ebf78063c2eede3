/**
 * Secrets on command lines never reach a browser: the agent masks them in every procedure and
 * stream (units.get, units.diagnose, gpus.list, events.watch, journals), and in the GPU samples
 * it keeps; admins can reveal a unit's command lines with an audited action; viewers do not read
 * journals unless the panel allows it. Through the panel's real endpoint, a real agent on a
 * simulated host whose Kimi unit runs `vllm serve … --api-key` with HF_TOKEN in a shell line, and a
 * process outside any unit holding GPU memory with a token on its command line.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import type { JournalEntry, ProcessInfo, UnitDetail } from "../contract/types";
import { addUser, call, HOST, hostConnected, login, openEventStream, startTestAgent, startTestPanel, type TestPanel } from "./panelTestHarness";

const KIMI = "vllm-kimi-k25.service";
const API_KEY = "sk-live-0123456789abcdef";
const HF = "hf_abcdefghijklmnopqrstuvwxyz";
const URL_PASS = "pg-pass-9876";

let agent: RunningAgent;
let tp: TestPanel;
const cookie: Record<string, string> = {};

beforeAll(async () => {
  agent = await startTestAgent();
  // the unit's ExecStart and its main process's argv carry secrets (as systemd and /proc would report them)
  const secretArgv = ["--api-key", API_KEY, `--hf-token=${HF}`, `--db=postgres://app:${URL_PASS}@db.internal/x`];
  const get = agent.hub.host.systemd.get.bind(agent.hub.host.systemd);
  agent.hub.host.systemd.get = async (name: string): Promise<UnitDetail | null> => {
    const d = await get(name);
    if (!d || name !== KIMI) return d;
    const main: ProcessInfo = d.mainProcess ?? { pid: 4242, state: "sleeping", cmdline: ["vllm", "serve", "/models/kimi"] };
    return {
      ...d,
      execStart: d.execStart.map((c) => ({ ...c, argv: [...c.argv, ...secretArgv] })),
      mainProcess: { ...main, cmdline: [...main.cmdline, ...secretArgv] },
      processes: [...d.processes, { pid: 4243, state: "sleeping", cmdline: ["/bin/sh", "-c", `HF_TOKEN=${HF} exec vllm serve --api-key ${API_KEY}`] }],
    };
  };
  const journal = agent.hub.host.systemd.journal.bind(agent.hub.host.systemd);
  agent.hub.host.systemd.journal = async (name: string, lines: number): Promise<JournalEntry[]> => [
    ...(await journal(name, lines)),
    { cursor: "s=test;i=1", atUsec: Date.now() * 1000, unit: name, priority: 6, pid: 1, message: `+ HF_TOKEN=${HF} exec vllm serve --api-key ${API_KEY}` },
  ];
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "ada", "admin");
  await addUser(tp.panel, "otto", "operator", ["vllm-*"]);
  await addUser(tp.panel, "vera", "viewer");
  for (const u of ["ada", "otto", "vera"]) cookie[u] = await login(tp.panel, u);
  await hostConnected(tp.panel);
  // and a process outside any unit holds GPU memory with a token on its command line
  const world = (agent.hub.host as unknown as { world: SimWorldLike }).world;
  const stray = world.spawn(["python3", "probe.py", "--token", API_KEY, `OPENAI_API_KEY=${API_KEY}`], null, 5);
  world.allocate(stray.pid, world.gpus[0]!.uuid, 1024);
  const deadline = Date.now() + 15_000;
  while (!agent.hub.gpuNow()?.gpus.some((g) => g.holders.some((h) => h.pid === stray.pid))) {
    if (Date.now() > deadline) throw new Error("the stray process never showed as a GPU holder");
    await new Promise((r) => setTimeout(r, 50));
  }
}, 30_000);

afterAll(async () => {
  await tp?.close();
  await agent?.close();
});

const SECRETS = [API_KEY, HF, URL_PASS];

interface SimWorldLike {
  gpus: { uuid: string }[];
  spawn(cmdline: string[], unit: string | null, busyPct?: number): { pid: number };
  allocate(pid: number, uuid: string, mib: number): void;
}
function expectNoSecret(text: string): void {
  for (const s of SECRETS) expect(text).not.toContain(s);
}

describe("secrets on command lines", () => {
  it.each(["vera", "otto", "ada"])("units.get masks them for %s (shown as --api-key ••••)", async (user) => {
    const r = await call(tp.panel, "units.get", { method: "GET", input: { host: HOST, name: KIMI }, cookie: cookie[user] });
    expect(r.status, r.text).toBe(200);
    expectNoSecret(r.text);
    const detail = (r.json!.result!.data as { detail: { execStart: { argv: string[] }[]; mainProcess: { cmdline: string[] } | null } }).detail;
    const argv = detail.execStart[0]!.argv;
    expect(argv.slice(argv.indexOf("--api-key"), argv.indexOf("--api-key") + 2)).toEqual(["--api-key", "••••"]);
    expect(argv).toContain("--hf-token=••••");
    expect(argv).toContain("--db=postgres://app:••••@db.internal/x");
    expect(detail.mainProcess?.cmdline).toContain("••••");
  });

  it("GPU holders (gpus.list), the diagnosis and the GPU history mask them too", async () => {
    const gpus = await call(tp.panel, "gpus.list", { method: "GET", input: { host: HOST }, cookie: cookie.vera });
    expect(gpus.status).toBe(200);
    expect(gpus.text).toContain('"--token","••••"');
    expect(gpus.text).toContain("OPENAI_API_KEY=••••");
    expectNoSecret(gpus.text);
    const diagnose = await call(tp.panel, "units.diagnose", { method: "GET", input: { host: HOST, name: KIMI }, cookie: cookie.vera });
    expect(diagnose.status).toBe(200);
    expectNoSecret(diagnose.text);
    const history = await call(tp.panel, "gpus.history", { method: "GET", input: { host: HOST, sinceMs: 0 }, cookie: cookie.vera });
    expectNoSecret(history.text);
    expectNoSecret(JSON.stringify(agent.hub.gpuHistory.since(0)));
  });

  it("the live stream (snapshot and gpu events) masks them", async () => {
    const stream = await openEventStream(tp.panel, cookie.vera!);
    const text = await stream.until(/"kind":"gpu"[\s\S]*probe\.py/, 10_000);
    await stream.close();
    expectNoSecret(text);
  });

  it("journals: masked; viewers cannot read them by default", async () => {
    const viewer = await call(tp.panel, "units.journal", { method: "GET", input: { host: HOST, name: KIMI, lines: 50 }, cookie: cookie.vera });
    expect(viewer.status).toBe(403);
    expect(viewer.json?.error?.message).toMatch(/viewers cannot read journals on this panel \(GPUDECK_VIEWER_JOURNAL=1 allows it\)/);
    const operator = await call(tp.panel, "units.journal", { method: "GET", input: { host: HOST, name: KIMI, lines: 50 }, cookie: cookie.otto });
    expect(operator.status).toBe(200);
    expect(operator.text).toContain("HF_TOKEN=••••");
    expectNoSecret(operator.text);
  });
});

describe("reveal.unit", () => {
  it("an admin sees them unmasked, and the audit log says who looked (never what)", async () => {
    const r = await call(tp.panel, "reveal.unit", { input: { host: HOST, name: KIMI }, cookie: cookie.ada });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain(API_KEY);
    const row = (await tp.panel.auth.audit.queryAudit({ action: "unit.reveal", limit: 1 }))[0]!;
    expect(row).toMatchObject({ user: "ada", unit: KIMI, host: HOST, outcome: "ok" });
    expectNoSecret(JSON.stringify(row));
  });

  it.each(["otto", "vera"])("%s is refused, and the refusal is audited", async (user) => {
    const r = await call(tp.panel, "reveal.unit", { input: { host: HOST, name: KIMI }, cookie: cookie[user] });
    expect(r.status).toBe(403);
    expect(r.json?.error?.message).toMatch(/only admins can reveal command lines/);
    expectNoSecret(r.text);
    expect((await tp.panel.auth.audit.queryAudit({ action: "unit.reveal", user, limit: 1 }))[0]).toMatchObject({ outcome: "refused" });
  });

  it("the agent itself refuses a non-admin, whatever the panel does", async () => {
    const r = await tp.panel.fleet
      .get(HOST)!
      .client.reveal.unit.query({ name: KIMI }, { context: { actor: { user: "x", role: "operator", unitPatterns: [] } } })
      .catch((e: Error) => e);
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toMatch(/Only admins can reveal/);
  });
});

describe("a panel that lets viewers read journals", () => {
  it("GPUDECK_VIEWER_JOURNAL=1: viewers get the (masked) journal", async () => {
    const open = await startTestPanel(agent, { env: { GPUDECK_VIEWER_JOURNAL: "1" } });
    try {
      await addUser(open.panel, "vera", "viewer");
      const c = await login(open.panel, "vera");
      await hostConnected(open.panel);
      const r = await call(open.panel, "units.journal", { method: "GET", input: { host: HOST, name: KIMI, lines: 50 }, cookie: c });
      expect(r.status, r.text).toBe(200);
      expectNoSecret(r.text);
    } finally {
      await open.close();
    }
  });
});
