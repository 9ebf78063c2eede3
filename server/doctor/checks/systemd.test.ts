import { describe, expect, it } from "vitest";
import type { ExecResult, Identity, Runner, SystemdProbe } from "../types";
import { checkSystemBus, checkUnitControl, checkUnitGlobs } from "./systemd";

function probe(over: Partial<SystemdProbe> = {}, units: string[] = ["vllm-a.service", "vllm-b.service", "tgi-x.service"]): SystemdProbe {
  const re = (g: string) => new RegExp(`^${g.replace(/[.]/g, "\\.").replace(/\*/g, ".*")}$`);
  return {
    address: "unix:path=/run/dbus/system_bus_socket",
    version: async () => "252.39-1~deb12u2",
    unitsMatching: async (globs) => units.filter((u) => globs.some((g) => re(g).test(u))),
    close: async () => undefined,
    ...over,
  };
}

const ok: ExecResult = { code: 0, stdout: "", stderr: "", timedOut: false, ms: 5 };

/** Records calls; answers with `answer(args)`. */
function runner(answer: (file: string, args: readonly string[]) => Partial<ExecResult>) {
  const calls: string[][] = [];
  const r: Runner = {
    run: async (file, args) => {
      calls.push([file, ...args]);
      return { ...ok, ...answer(file, args) };
    },
  };
  return { r, calls };
}

const user: Identity = { uid: 998, groups: ["gpudeck", "systemd-journal"], pid: 4242 };

describe("system bus", () => {
  it("passes: systemd answers with its version", async () => {
    expect(await checkSystemBus(probe())).toEqual({
      id: "system bus",
      status: "ok",
      detail: "systemd 252.39-1~deb12u2 on unix:path=/run/dbus/system_bus_socket",
    });
  });

  it("fails: the bus is not there", async () => {
    const r = await checkSystemBus(
      probe({ version: async () => Promise.reject(new Error("cannot connect to unix:path=/run/dbus/system_bus_socket: ENOENT")) }),
    );
    expect(r.status).toBe("error");
    expect(r.detail).toContain("ENOENT");
    expect(r.fix).toContain("systemctl status dbus");
  });

  it("warns: systemd older than supported", async () => {
    expect((await checkSystemBus(probe({ version: async () => "237" }))).status).toBe("warn");
  });
});

describe("unit globs", () => {
  it("passes: each glob matches units, and lists them", async () => {
    const out = await checkUnitGlobs(probe(), ["vllm-*.service", "tgi-*.service"]);
    expect(out.units).toEqual(["tgi-x.service", "vllm-a.service", "vllm-b.service"]);
    expect(out.result.map((r) => [r.status, r.detail])).toEqual([
      ["ok", '"vllm-*.service": vllm-a.service, vllm-b.service'],
      ["ok", '"tgi-*.service": tgi-x.service'],
    ]);
  });

  it("warns: one glob matches nothing (maybe a typo)", async () => {
    const out = await checkUnitGlobs(probe(), ["vllm-*.service", "vlm-*.service"]);
    expect(out.result[1]).toMatchObject({ status: "warn", detail: '"vlm-*.service" matches no unit on this host' });
    expect(out.result[1]!.fix).toContain("systemctl list-unit-files 'vlm-*.service'");
  });

  it("fails: nothing matches, or no globs at all", async () => {
    expect((await checkUnitGlobs(probe(), ["sglang-*.service"])).result).toEqual([
      expect.objectContaining({ status: "error", detail: 'no unit matches "sglang-*.service"' }),
    ]);
    expect((await checkUnitGlobs(probe(), [])).result[0]).toMatchObject({ status: "error", detail: "no unit globs: the agent will show and control nothing" });
  });
});

describe("unit control (polkit)", () => {
  it("passes as root without asking polkit", async () => {
    const { r, calls } = runner(() => ({}));
    expect((await checkUnitControl(r, { uid: 0, groups: ["root"], pid: 1 }, ["vllm-a.service"])).status).toBe("ok");
    expect(calls).toEqual([]);
  });

  it("passes when polkit allows start, stop and restart of a matching unit, asking with the unit and verb", async () => {
    const { r, calls } = runner(() => ({ code: 0 }));
    const res = await checkUnitControl(r, user, ["vllm-a.service"]);
    expect(res).toMatchObject({ status: "ok", detail: "polkit lets uid 998 start, stop and restart vllm-a.service" });
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
    expect(calls.map((c) => c.at(-1))).toEqual(["start", "stop", "restart"]);
  });

  it("fails when polkit says no (pkcheck exits 1)", async () => {
    const { r } = runner((_f, args) => ({ code: args.at(-1) === "stop" ? 0 : 1, stderr: "Not authorized." }));
    const res = await checkUnitControl(r, user, ["vllm-a.service"]);
    expect(res.status).toBe("error");
    expect(res.detail).toBe('polkit does not let uid 998 start/restart vllm-a.service ("Interactive authentication required" on every action)');
    expect(res.fix).toContain("deploy/polkit/50-gpudeck.rules");
  });

  it("warns when polkit cannot be asked", async () => {
    const { r } = runner(() => ({ code: null, spawnError: "ENOENT (spawn pkcheck ENOENT)" }));
    expect((await checkUnitControl(r, user, ["vllm-a.service"])).status).toBe("warn");
  });
});
