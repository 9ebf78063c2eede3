import { describe, expect, it } from "vitest";
import type { SystemdProbe } from "../types";
import { checkSystemBus, checkUnitGlobs } from "./systemd";

function probe(over: Partial<SystemdProbe> = {}, units: string[] = ["vllm-a.service", "vllm-b.service", "tgi-x.service"]): SystemdProbe {
  const re = (g: string) => new RegExp(`^${g.replace(/[.]/g, "\\.").replace(/\*/g, ".*")}$`);
  return {
    address: "unix:path=/run/dbus/system_bus_socket",
    version: async () => "252.39-1~deb12u2",
    unitsMatching: async (globs) => units.filter((u) => globs.some((g) => re(g).test(u))),
    serviceUser: async () => null,
    close: async () => undefined,
    ...over,
  };
}

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
    expect(out.samples).toEqual(["vllm-a.service", "tgi-x.service"]);
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
