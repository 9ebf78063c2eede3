import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { KernelMessage } from "../adapter";
import { JournalctlKernelLog, kernelLogArgs, parseKernelJournalLine } from "./kernelLog";

describe("parseKernelJournalLine", () => {
  it("journalctl -o json: MESSAGE as a string or as bytes, the realtime stamp, the cursor", () => {
    const line = JSON.stringify({
      __CURSOR: "s=1;i=2",
      __REALTIME_TIMESTAMP: "1714533129123456",
      MESSAGE: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a, GPU has fallen off the bus.",
      _TRANSPORT: "kernel",
    });
    expect(parseKernelJournalLine(line)).toEqual({
      atMs: 1714533129123,
      message: "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=a, GPU has fallen off the bus.",
      cursor: "s=1;i=2",
    });
    const bytes = JSON.stringify({ __REALTIME_TIMESTAMP: "1000", MESSAGE: [...Buffer.from("NVRM: Xid \xff")] });
    expect(parseKernelJournalLine(bytes)?.message.startsWith("NVRM: Xid")).toBe(true);
    expect(parseKernelJournalLine("-- No entries --")).toBeNull();
    expect(parseKernelJournalLine(JSON.stringify({ MESSAGE: "x" }))).toBeNull();
  });

  it("argv: the kernel log of this boot, as JSON, following; after a restart from the last cursor", () => {
    expect(kernelLogArgs(5000, null)).toEqual(["--dmesg", "--output=json", "--no-pager", "--quiet", "--follow", "--lines=5000"]);
    expect(kernelLogArgs(5000, "s=1;i=2")).toEqual(["--dmesg", "--output=json", "--no-pager", "--quiet", "--follow", "--after-cursor=s=1;i=2"]);
  });
});

describe("JournalctlKernelLog against a fake journalctl", () => {
  let dir = "";
  let reader: JournalctlKernelLog | null = null;
  afterEach(async () => {
    await reader?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("hands on NVRM lines, restarts after journalctl exits and resumes after the last cursor", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "gpudeck-kmsg-"));
    const argsLog = path.join(dir, "args.log");
    const fake = path.join(dir, "journalctl");
    // prints two kernel lines (one an Xid) then exits: the reader must restart it with --after-cursor
    writeFileSync(
      fake,
      `#!/usr/bin/env node
const fs = require("node:fs");
fs.appendFileSync(${JSON.stringify(argsLog)}, JSON.stringify(process.argv.slice(2)) + "\\n");
const n = fs.readFileSync(${JSON.stringify(argsLog)}, "utf8").trim().split("\\n").length;
const line = (i, msg) => JSON.stringify({ __CURSOR: "c" + n + "-" + i, __REALTIME_TIMESTAMP: String(1000000 * (n * 10 + i)), MESSAGE: msg });
process.stdout.write(line(1, "usb 1-1: new device") + "\\n");
process.stdout.write(line(2, "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus.") + "\\n");
`,
    );
    chmodSync(fake, 0o755);
    const got: KernelMessage[] = [];
    reader = new JournalctlKernelLog({ journalctl: fake, backlogLines: 100, backoffBaseMs: 20 });
    reader.start((m) => got.push(m));
    const deadline = Date.now() + 10_000;
    while (got.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(got.slice(0, 2)).toEqual([
      { atMs: 12_000, message: "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus." },
      { atMs: 22_000, message: "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python3, GPU has fallen off the bus." },
    ]);
    const { readFileSync } = await import("node:fs");
    const calls = readFileSync(argsLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as string[]);
    expect(calls[0]).toContain("--lines=100");
    expect(calls[1]).toContain("--after-cursor=c1-2");
  });
});
