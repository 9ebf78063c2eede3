import { describe, expect, it } from "vitest";
import type { ExecResult, Identity, Runner, SystemdProbe } from "../types";
import { checkUnitControl, type UnitControlDeps } from "./unitControl";

const ROOT: Identity = { uid: 0, groups: ["root"], pid: 1 };

/** Records pkcheck calls; answers with `answer(args)`. */
function deps(agentUser: string | null, answer: (args: readonly string[]) => Partial<ExecResult>, identity = ROOT) {
  const calls: string[][] = [];
  const started: string[] = [];
  const runner: Runner = {
    run: async (file, args) => {
      calls.push([file, ...args]);
      return { code: 0, stdout: "", stderr: "", timedOut: false, ms: 2, ...answer(args) };
    },
  };
  const probe = { serviceUser: async (unit: string) => (unit === "gpudeck-agent.service" ? agentUser : null) } as SystemdProbe;
  const d: UnitControlDeps = {
    runner,
    identity,
    probe,
    withProcessOf: async (user, fn) => {
      started.push(user);
      return fn(4242);
    },
  };
  return { d, calls, started };
}

describe("unit control (polkit, for the agent's user)", () => {
  it("passes when polkit lets the agent's user start, stop and restart one unit of each glob, asked with unit and verb", async () => {
    const { d, calls, started } = deps("gpudeck", () => ({ code: 0 }));
    const r = await checkUnitControl(d, ["vllm-a.service", "tgi-x.service"]);
    expect(r).toEqual({
      id: "unit control",
      status: "ok",
      detail: "polkit lets gpudeck (gpudeck-agent.service) start, stop and restart vllm-a.service, tgi-x.service",
    });
    expect(started).toEqual(["gpudeck"]);
    expect(calls[0]).toEqual([
      "pkcheck",
      "--action-id",
      "org.freedesktop.systemd1.manage-units",
      "--process",
      "4242",
      "--detail",
      "unit",
      "vllm-a.service",
      "--detail",
      "verb",
      "start",
    ]);
    expect(calls.map((c) => `${c[7]} ${c[10]}`)).toEqual([
      "vllm-a.service start",
      "vllm-a.service stop",
      "vllm-a.service restart",
      "tgi-x.service start",
      "tgi-x.service stop",
      "tgi-x.service restart",
    ]);
  });

  it("fails naming each unit polkit refuses (pkcheck exits 1 or 2)", async () => {
    const { d } = deps("gpudeck", (args) => ({ code: args.includes("tgi-x.service") ? 2 : 0 }));
    const r = await checkUnitControl(d, ["vllm-a.service", "tgi-x.service"]);
    expect(r.status).toBe("error");
    expect(r.detail).toBe('polkit does not let gpudeck start/stop/restart tgi-x.service: systemd answers "Interactive authentication required"');
    expect(r.fix).toContain("deploy/polkit/50-gpudeck.rules");
  });

  it("passes without asking when the agent runs as root", async () => {
    const { d, calls } = deps("", () => ({}));
    expect((await checkUnitControl(d, ["vllm-a.service"])).status).toBe("ok");
    expect(calls).toEqual([]);
  });

  it("skips as non-root: polkit takes details only from root", async () => {
    const { d, calls } = deps("gpudeck", () => ({}), { uid: 998, groups: ["gpudeck"], pid: 9 });
    const r = await checkUnitControl(d, ["vllm-a.service"]);
    expect(r.status).toBe("skip");
    expect(r.detail).toContain("sudo gpudeck doctor --agent");
    expect(calls).toEqual([]);
  });

  it("warns when polkit cannot be asked", async () => {
    const { d } = deps("gpudeck", () => ({ code: null, spawnError: "ENOENT (spawn pkcheck ENOENT)" }));
    expect((await checkUnitControl(d, ["vllm-a.service"])).status).toBe("warn");
  });
});
