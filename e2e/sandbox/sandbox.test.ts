/**
 * The sandbox must run a real systemd and leave the host exactly as it was. The first naive
 * version of this harness emptied the host's /tmp (systemd-tmpfiles --remove --boot), wrote to
 * the host's journal and /dev/kmsg and created cgroups at the roots of the host's trees; these
 * tests check for each of those, with the dangerous units deliberately running inside.
 */
import { randomBytes } from "node:crypto";
import { existsSync, promises as fs, readdirSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sandbox, sandboxSupport, warnIfUnsupported } from "./sandbox";

const skip = warnIfUnsupported("systemd sandbox harness tests (e2e/sandbox/sandbox.test.ts)");

/** Directories of every cgroup hierarchy, minus churn that is not ours. */
function cgroupTree(): string[] {
  const out: string[] = [];
  const support = sandboxSupport();
  const ours = support.ok ? support.cgroupParent : null;
  const walk = (dir: string, depth: number) => {
    out.push(dir);
    if (depth > 6) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const sub = path.join(dir, e.name);
      // other tools on this machine make per-command memory cgroups; other test files' sandboxes
      if (dir === "/sys/fs/cgroup/memory/process_api" || sub === ours) continue;
      walk(sub, depth + 1);
    }
  };
  walk("/sys/fs/cgroup", 0);
  return out.sort();
}

function listing(dir: string): string[] {
  if (!existsSync(dir)) return ["<absent>"];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = statSync(p, { throwIfNoEntry: false });
      out.push(`${p} ${st?.size ?? "?"} ${st?.mtimeMs ?? "?"}`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

async function readSysctl(name: string): Promise<string> {
  return fs.readFile(path.join("/proc/sys", ...name.split(".")), "utf8").catch(() => "<unreadable>");
}

interface HostState {
  mounts: string;
  cgroups: string[];
  journal: string[];
  dev: string[];
  hostname: string;
  sysctls: string[];
}

async function hostState(): Promise<HostState> {
  return {
    mounts: await fs.readFile("/proc/self/mountinfo", "utf8"),
    cgroups: cgroupTree(),
    journal: listing("/var/log/journal"),
    dev: readdirSync("/dev").sort(),
    hostname: os.hostname(),
    sysctls: await Promise.all(["kernel.core_pattern", "kernel.printk", "fs.binfmt_misc.status", "kernel.hostname"].map(readSysctl)),
  };
}

/** Files in the host's /tmp that systemd-tmpfiles --remove/--clean would delete. */
class TmpCanaries {
  readonly dir = path.join(os.tmpdir(), `gpudeck-sandbox-canary-${process.pid}-${randomBytes(4).toString("hex")}`);
  readonly file = `${this.dir}.file`;
  private readonly content = randomBytes(16).toString("hex");

  async plant(): Promise<void> {
    await fs.mkdir(this.dir);
    await fs.writeFile(path.join(this.dir, "marker"), this.content);
    const old = path.join(this.dir, "forty-days-old");
    await fs.writeFile(old, this.content);
    const t = new Date(Date.now() - 40 * 86400_000);
    await fs.utimes(old, t, t);
    await fs.writeFile(this.file, this.content);
  }

  async intact(): Promise<boolean> {
    const read = (p: string) => fs.readFile(p, "utf8").catch(() => null);
    return (
      (await read(path.join(this.dir, "marker"))) === this.content &&
      (await read(path.join(this.dir, "forty-days-old"))) === this.content &&
      (await read(this.file)) === this.content
    );
  }

  async remove(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
    await fs.rm(this.file, { force: true });
  }
}

const ONESHOT = `[Unit]
Description=sandbox harness test unit
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/bin/touch /tmp/gpudeck-unit-ran
`;

describe.skipIf(skip)("systemd sandbox", () => {
  const canaries = new TmpCanaries();
  let before: HostState;

  beforeAll(async () => {
    await canaries.plant();
    before = await hostState();
  });

  afterAll(async () => {
    await canaries.remove();
  });

  async function expectHostUnchanged(): Promise<void> {
    const after = await hostState();
    expect(after.mounts).toBe(before.mounts);
    expect(after.cgroups).toEqual(before.cgroups);
    expect(after.journal).toEqual(before.journal);
    expect(after.dev).toEqual(before.dev);
    expect(after.hostname).toBe(before.hostname);
    expect(after.sysctls).toEqual(before.sysctls);
    expect(await canaries.intact()).toBe(true);
  }

  it("boots systemd as PID 1, runs a unit, and leaves nothing behind", async () => {
    const t0 = performance.now();
    const sb = await Sandbox.boot({ name: "harness" });
    const bootMs = performance.now() - t0;
    let stopMs = 0;
    try {
      // PID 1 is systemd, in its own UTS namespace, in the dedicated cgroup
      expect((await sb.readFile("/proc/1/comm")).trim()).toBe("systemd");
      expect((await sb.exec(["hostname"])).stdout.trim()).toBe(sb.name);
      expect(existsSync(sb.cgroupDir)).toBe(true);
      expect(sb.cgroupDir.startsWith(sandboxSupport().ok ? (sandboxSupport() as { cgroupParent: string }).cgroupParent : "?")).toBe(true);

      // the units that damaged the host on the naive try are running in here
      expect(
        (await sb.systemctl(["is-active", "systemd-tmpfiles-setup.service", "systemd-journald.service", "dbus.service"])).stdout.split("\n").filter(Boolean),
      ).toEqual(["active", "active", "active"]);
      const running = await sb.systemctl(["is-system-running"], { check: false });
      expect(running.stdout.trim()).toBe("running");

      // a unit runs; what it writes stays inside
      await sb.writeFile("/etc/systemd/system/harness-test.service", ONESHOT);
      await sb.systemctl(["daemon-reload"]);
      await sb.systemctl(["start", "harness-test.service"]);
      expect((await sb.systemctl(["is-active", "harness-test.service"])).stdout.trim()).toBe("active");
      expect((await sb.exec(["test", "-e", "/tmp/gpudeck-unit-ran"])).code).toBe(0);
      expect(existsSync("/tmp/gpudeck-unit-ran")).toBe(false);
      expect(existsSync("/etc/systemd/system/harness-test.service")).toBe(false);

      // the sandbox's /tmp is its own: the host's canaries are not visible in it
      expect((await sb.exec(["test", "-e", canaries.file])).code).not.toBe(0);

      // isolation as the notes require
      const mountinfo = await sb.readFile("/proc/self/mountinfo");
      const mountOpts = (mp: string) =>
        mountinfo
          .split("\n")
          .find((l) => l.split(" ")[4] === mp)
          ?.split(" ")[5] ?? "<not mounted>";
      const fsTypeOf = (mp: string) => {
        const l = mountinfo.split("\n").find((x) => x.split(" ")[4] === mp);
        return l ? l.split(" - ")[1]?.split(" ")[0] : "<not mounted>";
      };
      expect(fsTypeOf("/")).toBe("overlay");
      expect(fsTypeOf("/tmp")).toBe("tmpfs");
      expect(fsTypeOf("/run")).toBe("tmpfs");
      expect(fsTypeOf("/dev")).toBe("tmpfs");
      expect(fsTypeOf("/sys/fs/cgroup")).toBe("cgroup2");
      expect(mountOpts("/sys").split(",")).toContain("ro");
      expect(mountOpts("/proc/sys").split(",")).toContain("ro");
      expect(mountinfo.split("\n").some((l) => / - cgroup /.test(l))).toBe(false); // no v1 hierarchy
      const devs = (await sb.exec(["ls", "-A", "/dev"])).stdout.split("\n").filter(Boolean).sort();
      expect(devs).not.toContain("kmsg");
      expect(devs.filter((d) => /^(sd|vd|nvme|loop|kvm|mem|port)/.test(d))).toEqual([]);
      expect((await sb.exec(["sh", "-c", "echo 1 > /proc/sys/vm/drop_caches"])).code).not.toBe(0);
      const journald = await sb.exec(["test", "-d", "/run/log/journal"]);
      expect(journald.code).toBe(0);
      // capability bounding set of PID 1: no sys_module (16), sys_time (25), net_admin (12)
      const capBnd = BigInt(`0x${/CapBnd:\s*([0-9a-f]+)/.exec(await sb.readFile("/proc/1/status"))![1]}`);
      for (const bit of [12n, 16n, 17n, 25n, 34n]) expect(capBnd & (1n << bit)).toBe(0n);

      // while it runs, the host's mount table and cgroup roots are untouched
      expect(await fs.readFile("/proc/self/mountinfo", "utf8")).toBe(before.mounts);
      for (const root of ["/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd", "/sys/fs/cgroup/memory"]) {
        if (!existsSync(root)) continue;
        expect(existsSync(path.join(root, "init.scope"))).toBe(false);
        expect(existsSync(path.join(root, "system.slice"))).toBe(false);
      }

      // something started inside is gone after stop()
      const sleeper = sb.spawn(["sleep", "300"]);
      const sleeperPid = await sleeper.hostPid();
      expect(existsSync(`/proc/${sleeperPid}`)).toBe(true);

      const t1 = performance.now();
      await sb.stop();
      stopMs = performance.now() - t1;
      expect(existsSync(`/proc/${sleeperPid}`)).toBe(false);
      expect(existsSync(`/proc/${sb.pid}`)).toBe(false);
      expect(existsSync(sb.cgroupDir)).toBe(false);
      expect(await sleeper.exited).toBeDefined();
    } finally {
      await sb.stop();
    }
    console.log(`[sandbox] boot ${bootMs.toFixed(0)} ms, stop ${stopMs.toFixed(0)} ms`);
    await expectHostUnchanged();
  });

  it("runs two sandboxes at once, each with its own systemd, /tmp and units", async () => {
    const [a, b] = await Promise.all([Sandbox.boot({ name: "twin-a" }), Sandbox.boot({ name: "twin-b" })]);
    try {
      expect(a.pid).not.toBe(b.pid);
      expect(a.cgroupDir).not.toBe(b.cgroupDir);
      await a.writeFile("/etc/systemd/system/only-in-a.service", ONESHOT);
      await a.systemctl(["daemon-reload"]);
      await a.systemctl(["start", "only-in-a.service"]);
      expect((await a.exec(["test", "-e", "/tmp/gpudeck-unit-ran"])).code).toBe(0);
      expect((await b.exec(["test", "-e", "/tmp/gpudeck-unit-ran"])).code).not.toBe(0);
      const inB = await b.systemctl(["show", "--property=LoadState", "only-in-a.service"]);
      expect(inB.stdout.trim()).toBe("LoadState=not-found");
      expect((await a.exec(["hostname"])).stdout.trim()).toBe(a.name);
      expect((await b.exec(["hostname"])).stdout.trim()).toBe(b.name);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    expect(existsSync(a.cgroupDir) || existsSync(b.cgroupDir)).toBe(false);
    await expectHostUnchanged();
  });

  it("refuses paths that could leave the sandbox", async () => {
    const sb = await Sandbox.boot({ name: "paths" });
    try {
      await expect(sb.writeFile("relative/x", "x")).rejects.toThrow(/absolute/);
      await expect(sb.writeFile("/etc/../../x", "x")).rejects.toThrow(/absolute/);
      // /var/run is an absolute symlink to /run: written inside, it lands in the sandbox's /run
      await sb.writeFile("/var/run/gpudeck-symlink-test", "inside");
      expect(await sb.readFile("/run/gpudeck-symlink-test")).toBe("inside");
      expect(existsSync("/run/gpudeck-symlink-test")).toBe(false);
    } finally {
      await sb.stop();
    }
    await expectHostUnchanged();
  });
});
