import { describe, expect, it } from "vitest";
import { parseXidMessage, pciKey } from "./xid";
import { XID_CODES, xidMeaning } from "./xidCodes";

describe("parseXidMessage (kernel format)", () => {
  it("pid and name, as drivers since ~470 print them", () => {
    expect(parseXidMessage("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.")).toEqual({
      pci: "0000:3b:00",
      code: 79,
      pid: 1234,
      processName: "python3",
      text: "GPU has fallen off the bus.",
    });
  });

  it("unknown pid and name", () => {
    expect(
      parseXidMessage(
        "NVRM: Xid (PCI:0000:b1:00): 119, pid='<unknown>', name=<unknown>, Timeout waiting for RPC from GSP0! Expected function 76 (GSP_RM_CONTROL).",
      ),
    ).toEqual({
      pci: "0000:b1:00",
      code: 119,
      pid: null,
      processName: null,
      text: "Timeout waiting for RPC from GSP0! Expected function 76 (GSP_RM_CONTROL).",
    });
  });

  it("older drivers without pid/name, a dmesg time stamp in front, upper-case hex", () => {
    expect(parseXidMessage("[ 1234.567890] NVRM: Xid (PCI:0000:02:00): 13, Graphics Exception: ESR 0x404600=0x80000001")).toMatchObject({
      pci: "0000:02:00",
      code: 13,
      pid: null,
      processName: null,
      text: "Graphics Exception: ESR 0x404600=0x80000001",
    });
    expect(
      parseXidMessage("NVRM: Xid (PCI:0000:3B:00.0): 48, pid=77, name=vllm serve, An uncorrectable double bit error (DBE) has been detected"),
    ).toMatchObject({
      pci: "0000:3b:00.0",
      code: 48,
      pid: 77,
      processName: "vllm serve",
    });
  });

  it("an MMU fault with commas after the name keeps them in the text", () => {
    const m = parseXidMessage(
      "NVRM: Xid (PCI:0000:18:00): 31, pid=3312, name=python, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f4e_6a000000",
    );
    expect(m).toMatchObject({
      code: 31,
      pid: 3312,
      processName: "python",
      text: "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f4e_6a000000",
    });
  });

  it("other kernel lines are not Xids", () => {
    for (const line of [
      "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
      "nvidia-nvlink: Nvlink Core is being initialized",
      "Xid 79 mentioned in passing",
      "",
    ]) {
      expect(parseXidMessage(line)).toBeNull();
    }
  });
});

describe("pciKey", () => {
  it("matches the driver's address to nvidia-smi's pci.bus_id", () => {
    expect(pciKey("0000:3b:00")).toBe(pciKey("00000000:3B:00.0"));
    expect(pciKey("0000:3b:00")).toBe("0:3b:00");
    expect(pciKey("0001:3b:00")).not.toBe(pciKey("00000000:3B:00.0"));
    expect(pciKey("nonsense")).toBeNull();
  });
});

describe("the Xid table", () => {
  it("knows the common codes, with meaning and advice; the fatal ones need a reset", () => {
    const common = [13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120];
    expect([...XID_CODES.keys()].sort((a, b) => a - b)).toEqual(common);
    for (const code of common) {
      const m = xidMeaning(code);
      expect(m.title.length).toBeGreaterThan(3);
      expect(m.meaning.length).toBeGreaterThan(20);
      expect(m.advice.length).toBeGreaterThan(20);
    }
    expect(common.filter((c) => xidMeaning(c).resetRequired)).toEqual([48, 61, 62, 64, 74, 79, 95, 119, 120]);
    expect(xidMeaning(79)).toMatchObject({ title: "GPU has fallen off the bus", severity: "critical" });
    expect(xidMeaning(79).advice).toMatch(/^Restart will not help; the host needs a reset/);
    expect(xidMeaning(4242)).toMatchObject({ code: 4242, title: "Xid 4242", resetRequired: false });
  });
});
