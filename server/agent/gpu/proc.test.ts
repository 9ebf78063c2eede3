import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  createProcAdapter,
  readStatFile,
  parseBootTimeSec,
  parseCmdline,
  parseProcStat,
  procStateFromLetter,
  unitFromCgroupFile,
  unitFromCgroupPath,
} from "./proc";

describe("parseProcStat", () => {
  it("reads state, ppid and start time", () => {
    const s = parseProcStat(
      "4242 (python3) S 1 4242 4242 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 12 0 123456 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
    );
    expect(s).toEqual({ pid: 4242, comm: "python3", state: "sleeping", stateLetter: "S", ppid: 1, startTimeTicks: 123456 });
  });
  it("survives a comm with spaces and parentheses", () => {
    const s = parseProcStat(
      "77 (VLLM::Worker) (tp 0)) D 1 77 77 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 12 0 999 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0",
    );
    expect(s?.comm).toBe("VLLM::Worker) (tp 0)");
    expect(s?.state).toBe("uninterruptible");
    expect(s?.startTimeTicks).toBe(999);
  });
  it("rejects garbage", () => {
    expect(parseProcStat("")).toBeNull();
    expect(parseProcStat("12 (x) S 1")).toBeNull();
  });
  it("maps every state letter", () => {
    expect(["R", "S", "D", "Z", "T", "t", "X", "I"].map(procStateFromLetter)).toEqual([
      "running",
      "sleeping",
      "uninterruptible",
      "zombie",
      "stopped",
      "stopped",
      "gone",
      "sleeping",
    ]);
  });
});

describe("parseCmdline / parseBootTimeSec", () => {
  it("splits on NUL and drops the trailing one", () => {
    expect(parseCmdline(Buffer.from("python3\0-m\0vllm.entrypoints.openai.api_server\0--model\0a b\0"))).toEqual([
      "python3",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "a b",
    ]);
    expect(parseCmdline("")).toEqual([]);
    // a process that rewrote its title (setproctitle) has no NULs
    expect(parseCmdline("VLLM::EngineCore")).toEqual(["VLLM::EngineCore"]);
  });
  it("reads btime", () => {
    expect(parseBootTimeSec("cpu  1 2 3\nbtime 1717000000\nprocesses 5\n")).toBe(1717000000);
    expect(parseBootTimeSec("cpu 1\n")).toBeNull();
  });
});

describe("unitFromCgroupPath / unitFromCgroupFile", () => {
  it.each([
    ["/system.slice/vllm-kimi-k25.service", "vllm-kimi-k25.service"],
    ["/system.slice/vllm.service/worker/inner", "vllm.service"],
    ["/system.slice/system-vllm.slice/vllm@kimi.service", "vllm@kimi.service"],
    ["/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service"],
    ["/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-1234.scope", "app-gnome-firefox-1234.scope"],
    ["/user.slice/user-1000.slice/user@1000.service/init.scope", "user@1000.service"],
    ["/user.slice/user-1000.slice/session-3.scope", "session-3.scope"],
    ["/system.slice/docker-0123abcd.scope", "docker-0123abcd.scope"],
    ["/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod12.slice/cri-containerd-abc.scope", "cri-containerd-abc.scope"],
    ["/system.slice/containerd.service/kubepods-burstable-pod1.slice:cri-containerd:abc", "containerd.service"],
    ["/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service"],
    ["/system.slice/foo\\x2dbar.service", "foo\\x2dbar.service"],
    ["/init.scope", "init.scope"],
    ["/user.slice/user-1000.slice", null],
    ["/", null],
    ["", null],
  ])("%s → %s", (p, unit) => {
    expect(unitFromCgroupPath(p)).toBe(unit);
  });

  it("cgroup v2 file", () => {
    expect(unitFromCgroupFile("0::/system.slice/vllm.service\n")).toBe("vllm.service");
  });
  it("cgroup v1 file: the name=systemd line", () => {
    const text = `12:pids:/system.slice/vllm.service
11:memory:/system.slice/vllm.service
2:cpu,cpuacct:/system.slice/vllm.service
1:name=systemd:/system.slice/vllm.service
`;
    expect(unitFromCgroupFile(text)).toBe("vllm.service");
  });
  it("hybrid: v2 line wins; a controller hierarchy elsewhere is ignored", () => {
    const text = `9:name=systemd:/system.slice/b.service
4:memory:/process_api/390790f1277f56ceb65e69f8a01930ec
0::/system.slice/b.service
`;
    expect(unitFromCgroupFile(text)).toBe("b.service");
  });
  it("falls back to name=systemd when the v2 line is the root (container/cgroup namespace)", () => {
    expect(unitFromCgroupFile("1:name=systemd:/system.slice/x.service\n0::/\n")).toBe("x.service");
  });
  it("no unit anywhere → null", () => {
    expect(unitFromCgroupFile("9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n")).toBeNull();
    expect(unitFromCgroupFile("")).toBeNull();
  });
});

describe("createProcAdapter on a fake /proc tree", () => {
  let root: string;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("reads state, cmdline, start time and unit", async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "gpudeck-proc-"));
    await writeFile(path.join(root, "stat"), "cpu 1 2 3\nbtime 1700000000\n");
    await mkdir(path.join(root, "321"));
    await writeFile(
      path.join(root, "321", "stat"),
      "321 (python3) Z 1 321 321 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 12 0 250 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
    );
    await writeFile(path.join(root, "321", "cmdline"), "");
    await writeFile(path.join(root, "321", "cgroup"), "0::/system.slice/vllm.service\n");
    const procs = createProcAdapter(root);
    expect(await procs.inspect(321)).toEqual({
      info: { pid: 321, state: "zombie", cmdline: [], startedAtMs: 1700000000 * 1000 + 2500 },
      unit: "vllm.service",
    });
    expect(await procs.inspect(322)).toEqual({ info: { pid: 322, state: "gone", cmdline: [] }, unit: null });
    expect(await procs.inspect(-1)).toEqual({ info: { pid: -1, state: "gone", cmdline: [] }, unit: null });
  });

  it("re-reads the state every time, the cmdline and unit only for a new process or after the TTL", async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "gpudeck-proc-"));
    await writeFile(path.join(root, "stat"), "cpu 1 2 3\nbtime 1700000000\n");
    await mkdir(path.join(root, "400"));
    const stat = (letter: string, start: number) =>
      writeFile(
        path.join(root, "400", "stat"),
        `400 (python3) ${letter} 1 400 400 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 12 0 ${start} 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n`,
      );
    await stat("S", 100);
    await writeFile(path.join(root, "400", "cmdline"), "python3\0serve-a\0");
    await writeFile(path.join(root, "400", "cgroup"), "0::/system.slice/a.service\n");
    const procs = createProcAdapter(root, { detailTtlMs: 60_000 });
    expect(await procs.inspect(400)).toMatchObject({ info: { state: "sleeping", cmdline: ["python3", "serve-a"] }, unit: "a.service" });
    await writeFile(path.join(root, "400", "cmdline"), "python3\0serve-b\0");
    await stat("D", 100);
    // same process: state fresh, details from the cache
    expect(await procs.inspect(400)).toMatchObject({ info: { state: "uninterruptible", cmdline: ["python3", "serve-a"] }, unit: "a.service" });
    // the PID reused by a new process (another start time): read again
    await writeFile(path.join(root, "400", "cgroup"), "0::/system.slice/b.service\n");
    await stat("S", 200);
    expect(await procs.inspect(400)).toMatchObject({ info: { cmdline: ["python3", "serve-b"] }, unit: "b.service" });
    // with no TTL, every call reads them
    const fresh = createProcAdapter(root, { detailTtlMs: 0 });
    await fresh.inspect(400);
    await writeFile(path.join(root, "400", "cmdline"), "python3\0serve-c\0");
    expect(await fresh.inspect(400)).toMatchObject({ info: { cmdline: ["python3", "serve-c"] } });
  });
});

describe("readStatFile (one reused buffer)", () => {
  let root: string;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("reads many stat files in turn, a long one whole, and says null for a missing one", async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "gpudeck-stat-"));
    const stat = (pid: number, comm: string) =>
      `${pid} (${comm}) S 1 ${pid} ${pid} 0 -1 4194560 1000 0 0 0 50 10 0 0 20 0 12 0 ${pid * 10} 1000000 500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n`;
    const long = "w".repeat(5000);
    await writeFile(path.join(root, "a"), stat(7, "python3 ünï"));
    await writeFile(path.join(root, "b"), stat(8, "x"));
    await writeFile(path.join(root, "c"), stat(9, long));
    expect(parseProcStat(readStatFile(path.join(root, "a"))!)).toMatchObject({ pid: 7, comm: "python3 ünï", startTimeTicks: 70 });
    // a shorter file after a longer one: nothing of the earlier read is left in the text
    expect(readStatFile(path.join(root, "b"))).toBe(stat(8, "x"));
    expect(readStatFile(path.join(root, "c"))).toBe(stat(9, long));
    expect(readStatFile(path.join(root, "missing"))).toBeNull();
  });

  it("inspects many PIDs at once, each with its own state", async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "gpudeck-stat-"));
    await writeFile(path.join(root, "stat"), "cpu 1 2 3\nbtime 1700000000\n");
    const letters = ["S", "D", "Z", "R", "T"];
    for (let pid = 500; pid < 520; pid++) {
      await mkdir(path.join(root, String(pid)));
      await writeFile(
        path.join(root, String(pid), "stat"),
        `${pid} (w${pid}) ${letters[pid % 5]} 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 ${pid} 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n`,
      );
      await writeFile(path.join(root, String(pid), "cmdline"), `w\0${pid}\0`);
    }
    const procs = createProcAdapter(root);
    const pids = Array.from({ length: 21 }, (_, i) => 500 + i); // 520 does not exist
    const got = await Promise.all(pids.map((pid) => procs.inspect(pid)));
    expect(got.map((g) => g.info.state)).toEqual([
      ...pids.slice(0, 20).map((pid) => ({ S: "sleeping", D: "uninterruptible", Z: "zombie", R: "running", T: "stopped" })[letters[pid % 5]!]),
      "gone",
    ]);
    expect(got.map((g) => g.info.startedAtMs)).toEqual([...pids.slice(0, 20).map((pid) => 1700000000 * 1000 + pid * 10), undefined]);
    expect(got[1]!.info.cmdline).toEqual(["w", "501"]);
  });
});

describe("createProcAdapter on the real /proc", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    }
  });

  function start(cmd: string, args: string[]): ChildProcess {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "ignore"] });
    children.push(child);
    return child;
  }

  it("sees a sleeping child with its argv and a plausible start time", async () => {
    const before = Date.now();
    const child = start("sleep", ["30"]);
    await new Promise((r) => setTimeout(r, 100));
    const { info } = await createProcAdapter().inspect(child.pid!);
    expect(info.state).toBe("sleeping");
    expect(info.cmdline).toEqual(["sleep", "30"]);
    // start time has 10 ms resolution and btime 1 s resolution
    expect(info.startedAtMs).toBeGreaterThan(before - 2000);
    expect(info.startedAtMs).toBeLessThan(Date.now() + 2000);
  });

  it("sees a stopped process, a zombie, and a gone pid", async () => {
    const stopped = start("sleep", ["30"]);
    await new Promise((r) => setTimeout(r, 50));
    process.kill(stopped.pid!, "SIGSTOP");
    // The parent (exec'ed sleep) never reaps its child: the child becomes a zombie.
    const parent = start("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"]);
    const zombiePid = await new Promise<number>((resolve) => parent.stdout!.once("data", (d: Buffer) => resolve(Number(d.toString().trim()))));
    await new Promise((r) => setTimeout(r, 200));
    const procs = createProcAdapter();
    expect((await procs.inspect(stopped.pid!)).info.state).toBe("stopped");
    const zombie = await procs.inspect(zombiePid);
    expect(zombie.info.state).toBe("zombie");
    expect(zombie.info.cmdline).toEqual([]);

    const done = start("true", []);
    await new Promise((r) => done.once("exit", r));
    expect((await procs.inspect(done.pid!)).info.state).toBe("gone");
  });
});
