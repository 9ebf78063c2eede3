import { beforeEach, describe, expect, it } from "vitest";
import type { Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { testDatabasesForFile } from "../store/testing/databases";
import { AUDIT_CSV_COLUMNS, auditToCsv, AuditStore, csvCell, type AuditEntry, type AuditRow } from "./audit";
import { DAY, FakeClock, HOUR, MINUTE } from "./testHelpers";

const dbs = testDatabasesForFile("the audit store");

/** Minimal RFC 4180 reader, to check that what we write reads back as the same cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (ch === '"') {
        quoted = false;
        i++;
        continue;
      }
      cell += ch;
      i++;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\r" && text[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += ch;
    i++;
  }
  if (cell !== "" || row.length) throw new Error("CSV does not end with CRLF");
  return rows;
}

const base: AuditEntry = {
  user: "alice",
  role: "operator",
  sourceAddr: "10.0.0.5",
  host: "gpu1",
  unit: "vllm-a.service",
  action: "restart",
  reason: "OOM loop",
  outcome: "pending",
  jobId: 4711,
  detail: null,
};

describe.each(dbs.dialects)("AuditStore on %s", (dialect) => {
  let store: Store;
  let fake: FakeClock;
  let audit: AuditStore;

  beforeEach(async () => {
    store = await (await dbs.fresh(dialect)).open();
    fake = new FakeClock();
    audit = new AuditStore(fixedStore(store), { clock: fake.clock });
  });

  async function seed(): Promise<void> {
    const entries: Partial<AuditEntry>[] = [
      { user: "alice", unit: "vllm-a.service", action: "restart", outcome: "done" },
      { user: "bob", unit: "vllm-b.service", action: "stop", outcome: "refused", reason: "vllm-b.service is not in your units" },
      { user: "Alice", unit: "vllm-b.service", action: "restart", outcome: "failed", host: "gpu2" },
      { user: "carol", unit: null, action: "login", outcome: "ok", host: null },
      { user: "alice", unit: "vllm-a.service", action: "kill", outcome: "refused" },
    ];
    for (const e of entries) {
      await audit.recordAudit({ ...base, ...e });
      fake.advance(HOUR);
    }
  }

  it("records an entry with the clock's time and returns its id", async () => {
    const id = await audit.recordAudit(base);
    expect(await audit.getAudit(id)).toEqual({ id, at: fake.now, ...base });
    const explicit = await audit.recordAudit({ ...base, at: 1234 });
    expect((await audit.getAudit(explicit))!.at).toBe(1234);
  });

  it("updates the outcome when the job result arrives", async () => {
    const id = await audit.recordAudit(base);
    expect(await audit.updateAuditOutcome(id, "done")).toBe(true);
    expect(await audit.getAudit(id)).toMatchObject({ outcome: "done", jobId: 4711 });
    expect(await audit.updateAuditOutcome(id, "failed", { detail: "ExecStartPre exited 1" })).toBe(true);
    expect(await audit.getAudit(id)).toMatchObject({ outcome: "failed", detail: "ExecStartPre exited 1" });
    expect(await audit.updateAuditOutcome(99999, "done")).toBe(false);
  });

  it("updates by host and job id: the newest pending entry only", async () => {
    const old = await audit.recordAudit({ ...base, outcome: "done" });
    const pending = await audit.recordAudit(base);
    const otherHost = await audit.recordAudit({ ...base, host: "gpu2" });
    expect(await audit.updateAuditOutcomeByJob("gpu1", 4711, "timeout")).toBe(pending);
    expect((await audit.getAudit(pending))!.outcome).toBe("timeout");
    expect((await audit.getAudit(old))!.outcome).toBe("done");
    expect((await audit.getAudit(otherHost))!.outcome).toBe("pending");
    expect(await audit.updateAuditOutcomeByJob("gpu1", 4711, "done")).toBeNull();
  });

  it("filters by user (case-insensitive), unit, action, host, outcome and time; newest first", async () => {
    await seed();
    const t0 = fake.now - 5 * HOUR;
    expect((await audit.queryAudit()).map((r) => r.action)).toEqual(["kill", "login", "restart", "stop", "restart"]);
    expect((await audit.queryAudit({ user: "alice" })).map((r) => r.user)).toEqual(["alice", "Alice", "alice"]);
    expect((await audit.queryAudit({ unit: "vllm-b.service" })).map((r) => r.user)).toEqual(["Alice", "bob"]);
    expect(await audit.queryAudit({ action: "restart" })).toHaveLength(2);
    expect(await audit.queryAudit({ host: "gpu2" })).toHaveLength(1);
    expect((await audit.queryAudit({ outcome: "refused" })).map((r) => r.user)).toEqual(["alice", "bob"]);
    expect((await audit.queryAudit({ from: t0 + HOUR, to: t0 + 3 * HOUR })).map((r) => r.at)).toEqual([t0 + 3 * HOUR, t0 + 2 * HOUR, t0 + HOUR]);
    expect(await audit.queryAudit({ user: "alice", action: "restart", unit: "vllm-a.service" })).toHaveLength(1);
    expect(await audit.queryAudit({ user: "nobody" })).toEqual([]);
  });

  it("filter values are data, never SQL", async () => {
    await seed();
    expect(await audit.queryAudit({ user: "' OR 1=1 --" })).toEqual([]);
    expect(await audit.queryAudit({ unit: "%" })).toEqual([]);
    expect((await audit.queryAudit()).length).toBe(5);
  });

  it("pages with limit and before", async () => {
    for (let i = 0; i < 25; i++) await audit.recordAudit({ ...base, detail: `n${i}` });
    const page1 = await audit.queryAudit({ limit: 10 });
    const page2 = await audit.queryAudit({ limit: 10, before: page1.at(-1)!.id });
    const page3 = await audit.queryAudit({ limit: 10, before: page2.at(-1)!.id });
    expect(page1.map((r) => r.detail)).toEqual(Array.from({ length: 10 }, (_, i) => `n${24 - i}`));
    expect(page2[0]!.detail).toBe("n14");
    expect(page3.map((r) => r.detail)).toEqual(["n4", "n3", "n2", "n1", "n0"]);
  });

  it("clamps the limit", async () => {
    for (let i = 0; i < 3; i++) await audit.recordAudit(base);
    expect(await audit.queryAudit({ limit: 0 })).toHaveLength(1);
    expect(await audit.queryAudit({ limit: -5 })).toHaveLength(1);
    expect(await audit.queryAudit({ limit: Number.NaN })).toHaveLength(3);
    expect(await audit.queryAudit({ limit: 1e9 })).toHaveLength(3);
  });

  it("stores hostile values verbatim but bounded", async () => {
    const id = await audit.recordAudit({ ...base, unit: "$(reboot);--help\n", reason: "r".repeat(10_000), detail: "d".repeat(100_000) });
    const row = (await audit.getAudit(id))!;
    expect(row.unit).toBe("$(reboot);--help\n");
    expect(row.reason!.length).toBeLessThanOrEqual(2001);
    expect(row.detail!.length).toBeLessThanOrEqual(8001);
  });

  it("prunes entries older than the retention", async () => {
    await audit.recordAudit(base);
    fake.advance(40 * DAY);
    await audit.recordAudit(base);
    fake.advance(DAY);
    expect(await audit.pruneAudit(30 * DAY)).toBe(1);
    expect(await audit.queryAudit()).toHaveLength(1);
    expect(await audit.pruneAudit(30 * DAY)).toBe(0);
    await expect(audit.pruneAudit(-1)).rejects.toThrow();
    fake.advance(MINUTE);
    expect(await audit.pruneAudit(0)).toBe(1);
  });

  it("writes a row once per key, however many replicas try (the steps of a GPU-aware restart)", async () => {
    const ids = await Promise.all([1, 2, 3].map(() => audit.recordAuditOnce("gpu1/op-1/0", { ...base, outcome: "stopping" })));
    expect(ids.filter((id) => id !== null)).toHaveLength(1);
    expect(await audit.queryAudit({ outcome: "stopping" })).toHaveLength(1);
    expect(await audit.recordAuditOnce("gpu1/op-1/1", { ...base, outcome: "waiting" })).not.toBeNull();
  });

  it("publishes an audit event with every row written or settled, in the same transaction", async () => {
    const id = await audit.recordAudit(base);
    await audit.updateAuditOutcome(id, "done");
    const events = await store.db.selectFrom("panel_events").selectAll().orderBy("id").execute();
    expect(events.map((e) => [e.kind, JSON.parse(e.body)])).toEqual([
      ["audit", { id, action: "restart", host: "gpu1", unit: "vllm-a.service", user: "alice", outcome: "pending" }],
      ["audit", { id, action: "restart", host: "gpu1", unit: "vllm-a.service", user: "alice", outcome: "done" }],
    ]);
  });
});

describe("CSV export", () => {
  const row = (over: Partial<AuditRow>): AuditRow => ({
    id: 1,
    at: Date.UTC(2025, 0, 15, 12, 0, 0),
    user: "alice",
    role: "operator",
    sourceAddr: "10.0.0.5",
    host: "gpu1",
    unit: "vllm-a.service",
    action: "restart",
    reason: null,
    outcome: "done",
    jobId: 4711,
    detail: null,
    ...over,
  });

  it("writes a header and one CRLF-terminated line per row, all cells quoted", async () => {
    const csv = auditToCsv([row({})]);
    expect(csv).toBe(
      `${AUDIT_CSV_COLUMNS.map((c) => `"${c}"`).join(",")}\r\n` +
        `"1","2025-01-15T12:00:00.000Z","alice","operator","10.0.0.5","gpu1","vllm-a.service","restart","","done","4711",""\r\n`,
    );
  });

  it("escapes quotes, commas and line breaks so they read back unchanged", async () => {
    const reason = 'he said "restart it, now"\r\nsecond line\nthird';
    const parsed = parseCsv(auditToCsv([row({ reason, detail: "a,b" })]));
    expect(parsed).toHaveLength(2);
    expect(parsed[1]![8]).toBe(reason);
    expect(parsed[1]![11]).toBe("a,b");
  });

  it.each([['=HYPERLINK("http://evil","x")'], ["+1+cmd|' /C calc'!A0"], ["-2+3"], ["@SUM(1,2)"], ["\t=1+1"], ["\r=1+1"]])(
    "neutralises the formula %j with a leading apostrophe",
    (payload) => {
      const parsed = parseCsv(auditToCsv([row({ unit: payload, reason: payload, user: payload })]));
      expect(parsed[1]![2]).toBe(`'${payload}`);
      expect(parsed[1]![6]).toBe(`'${payload}`);
      expect(parsed[1]![8]).toBe(`'${payload}`);
    },
  );

  it("leaves harmless text, numbers and empty cells alone", async () => {
    expect(csvCell("vllm-a.service")).toBe('"vllm-a.service"');
    expect(csvCell("a=b")).toBe('"a=b"');
    expect(csvCell(-5)).toBe('"-5"');
    expect(csvCell(null)).toBe('""');
    expect(csvCell("")).toBe('""');
  });

  it("adds a BOM when asked (Excel and UTF-8)", async () => {
    expect(auditToCsv([], { bom: true }).startsWith('\uFEFF"id"')).toBe(true);
    expect(auditToCsv([]).startsWith('"id"')).toBe(true);
  });

  it.each(dbs.dialects)("round-trips rows from the store on %s, unicode included", async (dialect) => {
    const audit = new AuditStore(fixedStore(await (await dbs.fresh(dialect)).open()));
    await audit.recordAudit({ ...base, reason: "GPU-Speicher voll — neu starten 🚀", unit: "-H evil" });
    const parsed = parseCsv(auditToCsv(await audit.queryAudit()));
    expect(parsed[1]![8]).toBe("GPU-Speicher voll — neu starten 🚀");
    expect(parsed[1]![6]).toBe("'-H evil");
  });
});
