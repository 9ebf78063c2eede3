import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clampLines, followJournal, journalctlArgs, parseJournalLine, readJournal } from "./journal";

// Real `journalctl -o json` output from systemd 252 (the sandbox), trimmed to the fields we read.
const STARTED =
  '{"__CURSOR":"s=ab;i=1f;b=cd;m=5a;t=62b;x=99","__REALTIME_TIMESTAMP":"1796017275588509","PRIORITY":"6","_PID":"1","UNIT":"flap.service","JOB_RESULT":"done","JOB_TYPE":"start","MESSAGE":"Started flap.service.","_SYSTEMD_UNIT":"init.scope"}';
const OWN_OUTPUT =
  '{"__CURSOR":"s=ab;i=20","__REALTIME_TIMESTAMP":"1796017275600000","PRIORITY":"3","_PID":"307","_SYSTEMD_UNIT":"flap.service","MESSAGE":"GPU 0 still holds 71234 MiB"}';

describe("parseJournalLine", () => {
  it("reads message, priority, pid, timestamp, unit and JOB_RESULT", () => {
    expect(parseJournalLine(STARTED, "flap.service")).toEqual({
      cursor: "s=ab;i=1f;b=cd;m=5a;t=62b;x=99",
      atUsec: 1796017275588509,
      unit: "flap.service",
      priority: 6,
      pid: 1,
      message: "Started flap.service.",
      jobResult: "done",
    });
    expect(parseJournalLine(OWN_OUTPUT, "flap.service")).toMatchObject({ unit: "flap.service", priority: 3, pid: 307 });
  });

  it("decodes byte-array messages and cuts huge ones", () => {
    const bytes = [...Buffer.from("caf\u00e9 \u2713")];
    const e = parseJournalLine(JSON.stringify({ __CURSOR: "c", __REALTIME_TIMESTAMP: "1", MESSAGE: bytes }), "x.service");
    expect(e?.message).toBe("caf\u00e9 \u2713");
    const big = parseJournalLine(JSON.stringify({ __CURSOR: "c", __REALTIME_TIMESTAMP: "1", MESSAGE: "x".repeat(100_000) }), "x.service");
    expect(big!.message.length).toBeLessThan(17_000);
    expect(big!.message.endsWith("[cut]")).toBe(true);
  });

  it("handles repeated fields, missing pid, bad priority and null messages", () => {
    const e = parseJournalLine(
      JSON.stringify({ __CURSOR: "c", __REALTIME_TIMESTAMP: "5", MESSAGE: ["first", "second"], PRIORITY: "nine", MESSAGE_ID: null }),
      "x.service",
    );
    expect(e).toMatchObject({ message: "first", priority: 6, pid: null, unit: "x.service" });
    const tooBig = parseJournalLine(JSON.stringify({ __CURSOR: "c", __REALTIME_TIMESTAMP: "5", MESSAGE: null }), "x.service");
    expect(tooBig!.message).toMatch(/too large/);
  });

  it("rejects lines that are not entries", () => {
    expect(parseJournalLine("", "x.service")).toBeNull();
    expect(parseJournalLine("-- No entries --", "x.service")).toBeNull();
    expect(parseJournalLine("{broken", "x.service")).toBeNull();
    expect(parseJournalLine('{"MESSAGE":"no cursor"}', "x.service")).toBeNull();
  });
});

describe("journalctlArgs", () => {
  it("passes the unit as one --unit= element, last, and bounds the backlog", () => {
    const args = journalctlArgs({ unit: "vllm@a.service", lines: 1e9, follow: true, directory: "/run/log/journal" });
    expect(args).toContain("--lines=5000");
    expect(args).toContain("--follow");
    expect(args).toContain("--directory=/run/log/journal");
    expect(args.at(-1)).toBe("--unit=vllm@a.service");
    expect(args.filter((a) => !a.startsWith("--"))).toEqual([]);
  });
  it("clamps line counts", () => {
    expect(clampLines(-3)).toBe(0);
    expect(clampLines(12.7)).toBe(12);
    expect(clampLines(Number.NaN)).toBe(100);
  });
});

describe("running journalctl (a stand-in binary that records its argv)", () => {
  let dir = "";
  let fake = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-journal-test-"));
    fake = path.join(dir, "journalctl");
    // Prints its argv as an entry, then N entries; with --follow keeps printing until killed.
    await writeFile(
      fake,
      `#!/usr/bin/env node
const args = process.argv.slice(2);
const follow = args.includes("--follow");
const n = Number((args.find((a) => a.startsWith("--lines=")) || "--lines=0").slice(8));
let i = 0;
const line = (msg) => process.stdout.write(JSON.stringify({ __CURSOR: "c" + i, __REALTIME_TIMESTAMP: String(1000 + i++), MESSAGE: msg, PRIORITY: "5", _PID: "77" }) + "\\n");
line("argv " + JSON.stringify(args));
for (let k = 0; k < Math.min(n, 5); k++) line("old " + k);
if (args.includes("--unit=fail.service")) { process.stderr.write("Failed to add match 'x': Invalid argument\\n"); process.exit(1); }
if (follow) { let k = 0; setInterval(() => line("live " + k++), 5); }
`,
    );
    await chmod(fake, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("returns at most `lines` entries, newest last, with the argv we expect", async () => {
    const all = await readJournal({ unit: "a.service", lines: 3, journalctl: fake });
    expect(all.map((e) => e.message)).toEqual(["old 0", "old 1", "old 2"]);
    const withArgv = await readJournal({ unit: "a.service", lines: 10, journalctl: fake });
    expect(JSON.parse(withArgv[0]!.message.slice(5))).toEqual(journalctlArgs({ unit: "a.service", lines: 10 }));
  });

  it("reports journalctl's error text", async () => {
    await expect(readJournal({ unit: "fail.service", lines: 1, journalctl: fake })).rejects.toThrow(/Invalid argument/);
    await expect(readJournal({ unit: "a.service", lines: 1, journalctl: path.join(dir, "missing") })).rejects.toThrow(/cannot run journalctl/);
  });

  it("follows live until aborted, then the child is gone", async () => {
    const ctl = new AbortController();
    const seen: string[] = [];
    for await (const e of followJournal({ unit: "a.service", lines: 0, journalctl: fake, signal: ctl.signal })) {
      seen.push(e.message);
      if (seen.filter((m) => m.startsWith("live")).length === 3) ctl.abort();
    }
    expect(seen.slice(1)).toEqual(["live 0", "live 1", "live 2"]);
  });

  it("pauses journalctl when the consumer is slow, and loses nothing", async () => {
    const ctl = new AbortController();
    const seen: number[] = [];
    for await (const e of followJournal({ unit: "a.service", lines: 0, journalctl: fake, signal: ctl.signal, maxQueued: 4 })) {
      const m = /^live (\d+)$/.exec(e.message);
      if (m) seen.push(Number(m[1]));
      await new Promise((r) => setTimeout(r, 8));
      if (seen.length === 12) ctl.abort();
    }
    expect(seen).toEqual([...Array(12).keys()]);
  });
});
