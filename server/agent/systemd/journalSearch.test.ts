import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grepProblem, journalSearchInput } from "../../contract/journalSearch";
import {
  downloadLine,
  JournalTimeout,
  journalSearchArgs,
  kernelGrep,
  kernelSearchArgs,
  mergeByTime,
  runJournalctl,
  searchUnitJournal,
  SEARCH_BOUNDS,
} from "./journalSearch";

const line = (i: number, atMs: number, message: string, priority = 6) =>
  JSON.stringify({
    __CURSOR: `s=1;i=${i}`,
    __REALTIME_TIMESTAMP: String(atMs * 1000),
    PRIORITY: String(priority),
    _PID: "42",
    _SYSTEMD_UNIT: "vllm-a.service",
    MESSAGE: message,
  });

describe("journalSearchArgs", () => {
  it("each filter is one argv element; grep always case-insensitive; the unit last", () => {
    const args = journalSearchArgs({
      unit: "vllm-a.service",
      since: 1_796_000_000_123,
      until: 1_796_000_060_001,
      priority: "err",
      grep: "out of memory; rm -rf /",
      boot: -1,
      cursor: "s=ab;i=1f",
      limit: 300,
    });
    expect(args).toEqual([
      "--output=json",
      "--output-fields=MESSAGE,PRIORITY,_PID,UNIT,_SYSTEMD_UNIT,JOB_RESULT",
      "--no-pager",
      "--all",
      "--quiet",
      "--lines=300",
      "--after-cursor=s=ab;i=1f",
      // no --since with --after-cursor (journalctl refuses both): the range is applied to what it reads
      "--until=@1796000061",
      "--priority=3",
      "--grep=out of memory; rm -rf /",
      "--case-sensitive=false",
      "--boot=-1",
      "--unit=vllm-a.service",
    ]);
  });

  it("since without a cursor goes to journalctl, in whole seconds", () => {
    expect(journalSearchArgs({ unit: "u.service", since: 1_796_000_000_999 })).toContain("--since=@1796000000");
  });

  it("priority as a number, a boot id, no limit: every line of the range; grep applied here when journalctl has no PCRE2", () => {
    const args = journalSearchArgs({ unit: "u.service", priority: 4, boot: "0123456789abcdef0123456789abcdef", grep: "x" }, { grepHere: true });
    expect(args).toContain("--priority=4");
    expect(args).toContain("--boot=0123456789abcdef0123456789abcdef");
    expect(args.some((a) => a.startsWith("--lines") || a.startsWith("--grep"))).toBe(false);
    expect(() => journalSearchArgs({ unit: "u.service", priority: "loud" as never })).toThrow(/syslog priority/);
    expect(() => journalSearchArgs({ unit: "u.service", boot: "-1; reboot" })).toThrow(/boot/);
  });

  it("kernel lines: a field match after --, the NVIDIA driver's lines naming the unit's GPUs", () => {
    const args = kernelSearchArgs({ since: 1000, kernelPci: ["00000000:3B:00.0", "0000:86:00.0"] });
    expect(args.slice(-4)).toEqual(["--grep=NVRM.*(3b:00|86:00)", "--case-sensitive=false", "--", "_TRANSPORT=kernel"]);
    expect(kernelGrep([])).toBe("NVRM");
    expect(kernelGrep(["bogus"])).toBe("NVRM");
  });
});

describe("the input's bounds", () => {
  const base = { name: "vllm-a.service" };
  it("limit up to 5000, lines as its alias, since before until, priority names and numbers", () => {
    expect(journalSearchInput.safeParse({ ...base, limit: 5000 }).success).toBe(true);
    expect(journalSearchInput.safeParse({ ...base, limit: 5001 }).success).toBe(false);
    expect(journalSearchInput.safeParse({ ...base, lines: 100 }).success).toBe(true);
    expect(journalSearchInput.safeParse({ ...base, since: 2000, until: 1000 }).success).toBe(false);
    expect(journalSearchInput.safeParse({ ...base, priority: "err" }).success).toBe(true);
    expect(journalSearchInput.safeParse({ ...base, priority: 8 }).success).toBe(false);
    expect(journalSearchInput.safeParse({ ...base, boot: 1 }).success).toBe(false);
    expect(journalSearchInput.safeParse({ ...base, follow: true }).success).toBe(false);
  });

  it("grep: a literal or a simple regex, at most 200 characters", () => {
    expect(grepProblem("CUDA out of memory")).toBeNull();
    expect(grepProblem("Xid.*(79|48)")).toBeNull();
    expect(grepProblem("x".repeat(201))).toMatch(/longer than 200/);
    expect(grepProblem("(a+)+$")).toMatch(/repeated group/);
    expect(grepProblem("(\\w)\\1")).toMatch(/back-references/);
    expect(grepProblem("(?=x)")).toMatch(/look-around/);
    expect(grepProblem("[unclosed")).toMatch(/not a valid regular expression/);
    expect(journalSearchInput.safeParse({ ...base, grep: "(a*)*" }).success).toBe(false);
  });
});

describe("runJournalctl bounds (a fake journalctl)", () => {
  let dir = "";
  let many = "";
  let slow = "";
  let big = "";
  let noPcre = "";
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-jsearch-"));
    const lines = Array.from({ length: 300 }, (_, i) =>
      line(i, 1_796_000_000_000 + i * 1000, i % 10 === 0 ? `ERROR CUDA out of memory ${i}` : `tick ${i}`, i % 10 === 0 ? 3 : 6),
    );
    await writeFile(path.join(dir, "lines.json"), lines.join("\n") + "\n");
    many = path.join(dir, "many");
    await writeFile(many, `#!/bin/sh\ncat ${dir}/lines.json\n`);
    slow = path.join(dir, "slow");
    await writeFile(slow, `#!/bin/sh\nhead -n 2 ${dir}/lines.json\nexec sleep 30\n`);
    big = path.join(dir, "big");
    await writeFile(big, `#!/bin/sh\nwhile true; do cat ${dir}/lines.json; done\n`);
    noPcre = path.join(dir, "nopcre");
    await writeFile(noPcre, `#!/bin/sh\ncase "$*" in *--grep*) echo "Compiled without pattern matching support" >&2; exit 1;; esac\ncat ${dir}/lines.json\n`);
    for (const f of [many, slow, big, noPcre]) await chmod(f, 0o755);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps the newest maxLines and says it cut", async () => {
    const r = await runJournalctl(many, [], "vllm-a.service", { ...SEARCH_BOUNDS, maxLines: 50 });
    expect(r.entries).toHaveLength(50);
    expect(r.entries[0]!.message).toMatch(/ 250$/);
    expect(r.cut).toBe(true);
  });

  it("oldest: stops at the bound (the histogram counts the start of a range)", async () => {
    let n = 0;
    const r = await runJournalctl(big, [], "vllm-a.service", { ...SEARCH_BOUNDS, maxLines: 1000 }, { keep: "oldest", onEntry: () => n++ });
    expect(n).toBe(1000);
    expect(r.cut).toBe(true);
  });

  it("a byte bound kills a journalctl that writes without end", async () => {
    const r = await runJournalctl(big, [], "vllm-a.service", { maxLines: 1_000_000, maxBytes: 200_000, timeoutMs: 10_000 });
    expect(r.cut).toBe(true);
    expect(r.entries.length).toBeLessThan(2000);
  });

  it("a time bound kills a slow journalctl and says how to narrow it", async () => {
    await expect(runJournalctl(slow, [], "vllm-a.service", { ...SEARCH_BOUNDS, timeoutMs: 300 })).rejects.toThrow(JournalTimeout);
    await expect(runJournalctl(slow, [], "vllm-a.service", { ...SEARCH_BOUNDS, timeoutMs: 300 })).rejects.toThrow(/narrow the time range/);
  });

  it("search: the ms range exactly, and grep applied here when journalctl lacks PCRE2", async () => {
    const r = await searchUnitJournal(
      { journalctl: noPcre },
      { unit: "vllm-a.service", grep: "cuda OUT", since: 1_796_000_100_000, until: 1_796_000_200_000, limit: 100 },
      { bounds: SEARCH_BOUNDS },
    );
    expect(r.entries.map((e) => e.message)).toEqual(Array.from({ length: 11 }, (_, i) => `ERROR CUDA out of memory ${100 + i * 10}`));
  });
});

describe("merging and download lines", () => {
  it("merges by time, keeping the newest", () => {
    const e = (t: number, unit: string) => ({ cursor: `${unit}${t}`, atUsec: t * 1000, unit, priority: 6, pid: null, message: "" });
    expect(mergeByTime([e(1, "a"), e(5, "a")], [e(3, "kernel"), e(6, "kernel")], 3).map((x) => x.cursor)).toEqual(["kernel3", "a5", "kernel6"]);
  });
  it("one line per entry, with time, unit, pid and error mark", () => {
    expect(
      downloadLine({ cursor: "c", atUsec: Date.UTC(2026, 11, 3, 8, 12, 4, 123) * 1000, unit: "vllm-a.service", priority: 3, pid: 42, message: "boom\nsecond" }),
    ).toBe("2026-12-03T08:12:04.123Z vllm-a.service[42] <err>: boom\n    second");
  });
});

describe("order", () => {
  it("lines come oldest first even when journalctl writes them newest first (--lines with --grep)", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-jorder-"));
    try {
      const bin = path.join(dir, "reversed");
      await writeFile(
        path.join(dir, "l.json"),
        [line(3, 3000, "fourth"), line(2, 3000, "third"), line(1, 2000, "second"), line(0, 1000, "first")].join("\n") + "\n",
      );
      await writeFile(bin, `#!/bin/sh\ncat ${dir}/l.json\n`);
      await chmod(bin, 0o755);
      const r = await searchUnitJournal({ journalctl: bin }, { unit: "vllm-a.service", grep: "i", limit: 10 }, { bounds: SEARCH_BOUNDS });
      expect(r.entries.map((e) => e.message)).toEqual(["first", "second", "third", "fourth"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
