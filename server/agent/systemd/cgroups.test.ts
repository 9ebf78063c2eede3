import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cgroupDir, cgroupPids, detectCgroupRoot } from "./cgroups";

describe("unit cgroups", () => {
  let root = "";
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "gpudeck-cgroup-test-"));
    const unit = path.join(root, "system.slice", "vllm.service");
    await mkdir(path.join(unit, "worker"), { recursive: true });
    await writeFile(path.join(unit, "cgroup.procs"), "311\n42\n");
    await writeFile(path.join(unit, "worker", "cgroup.procs"), "4711\n42\n");
    await writeFile(path.join(root, "cgroup.procs"), "1\n");
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("collects the processes of a unit and its delegated sub-cgroups", async () => {
    expect(await cgroupPids(root, "/system.slice/vllm.service")).toEqual([42, 311, 4711]);
    expect(await cgroupPids(root, "/system.slice/vllm.service", 2)).toHaveLength(2);
    expect(await cgroupPids(root, "/system.slice/missing.service")).toEqual([]);
  });

  it("never leaves the cgroup root", async () => {
    expect(cgroupDir(root, "/../etc")).toBeNull();
    expect(cgroupDir(root, "/system.slice/../../x")).toBeNull();
    expect(cgroupDir(root, "relative")).toBeNull();
    expect(await cgroupPids(root, "/system.slice/vllm.service/../..")).toEqual([]);
  });

  it("finds a cgroup hierarchy on this machine, or reports none", () => {
    const found = detectCgroupRoot();
    expect(found === null || found.startsWith("/sys/fs/cgroup")).toBe(true);
    expect(detectCgroupRoot(root)).toBeNull();
  });
});
