import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPanelDb, type PanelDb } from "./db";
import { AUDIT_CSV_COLUMNS, auditToCsv, AuditStore, csvCell, type AuditEntry, type AuditRow } from "./audit";
import { DAY, FakeClock, HOUR, MINUTE, tempDataDir } from "./testHelpers";

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

describe("AuditStore", () => {
  let tmp: ReturnType<typeof tempDataDir>;
  let db: PanelDb;
  let fake: FakeClock;
  let audit: AuditStore;

  beforeEach(() => {
    tmp = tempDataDir();
    db = openPanelDb(tmp.dir);
    fake = new FakeClock();
    audit = new AuditStore(db, { clock: fake.clock });
  });
  afterEach(() => {
    db.close();
    tmp.cleanup();
  });

  function seed(): void {
    const entries: Partial<AuditEntry>[] = [
      { user: "alice", unit: "vllm-a.service", action: "restart", outcome: "done" },
      { user: "bob", unit: "vllm-b.service", action: "stop", outcome: "refused", reason: "vllm-b.service is not in your units" },
      { user: "Alice", unit: "vllm-b.service", action: "restart", outcome: "failed", host: "gpu2" },
      { user: "carol", unit: null, action: "login", outcome: "ok", host: null },
      { user: "alice", unit: "vllm-a.service", action: "kill", outcome: "refused" },
    ];
    for (const e of entries) {
      audit.recordAudit({ ...base, ...e });
      fake.advance(HOUR);
    }
  }

  it("records an entry with the clock's time and returns its id", () => {
    const id = audit.recordAudit(base);
    expect(audit.getAudit(id)).toEqual({ id, at: fake.now, ...base });
    const explicit = audit.recordAudit({ ...base, at: 1234 });
    expect(audit.getAudit(explicit)!.at).toBe(1234);
  });

  it("updates the outcome when the job result arrives", () => {
    const id = audit.recordAudit(base);
    expect(audit.updateAuditOutcome(id, "done")).toBe(true);
    expect(audit.getAudit(id)).toMatchObject({ outcome: "done", jobId: 4711 });
    expect(audit.updateAuditOutcome(id, "failed", { detail: "ExecStartPre exited 1" })).toBe(true);
    expect(audit.getAudit(id)).toMatchObject({ outcome: "failed", detail: "ExecStartPre exited 1" });
    expect(audit.updateAuditOutcome(99999, "done")).toBe(false);
  });

  it("updates by host and job id: the newest pending entry only", () => {
    const old = audit.recordAudit({ ...base, outcome: "done" });
    const pending = audit.recordAudit(base);
    const otherHost = audit.recordAudit({ ...base, host: "gpu2" });
    expect(audit.updateAuditOutcomeByJob("gpu1", 4711, "timeout")).toBe(pending);
    expect(audit.getAudit(pending)!.outcome).toBe("timeout");
    expect(audit.getAudit(old)!.outcome).toBe("done");
    expect(audit.getAudit(otherHost)!.outcome).toBe("pending");
    expect(audit.updateAuditOutcomeByJob("gpu1", 4711, "done")).toBeNull();
  });

  it("filters by user (case-insensitive), unit, action, host, outcome and time; newest first", () => {
    seed();
    const t0 = fake.now - 5 * HOUR;
    expect(audit.queryAudit().map((r) => r.action)).toEqual(["kill", "login", "restart", "stop", "restart"]);
    expect(audit.queryAudit({ user: "alice" }).map((r) => r.user)).toEqual(["alice", "Alice", "alice"]);
    expect(audit.queryAudit({ unit: "vllm-b.service" }).map((r) => r.user)).toEqual(["Alice", "bob"]);
    expect(audit.queryAudit({ action: "restart" })).toHaveLength(2);
    expect(audit.queryAudit({ host: "gpu2" })).toHaveLength(1);
    expect(audit.queryAudit({ outcome: "refused" }).map((r) => r.user)).toEqual(["alice", "bob"]);
    expect(audit.queryAudit({ from: t0 + HOUR, to: t0 + 3 * HOUR }).map((r) => r.at)).toEqual([t0 + 3 * HOUR, t0 + 2 * HOUR, t0 + HOUR]);
    expect(audit.queryAudit({ user: "alice", action: "restart", unit: "vllm-a.service" })).toHaveLength(1);
    expect(audit.queryAudit({ user: "nobody" })).toEqual([]);
  });

  it("filter values are data, never SQL", () => {
    seed();
    expect(audit.queryAudit({ user: "' OR 1=1 --" })).toEqual([]);
    expect(audit.queryAudit({ unit: "%" })).toEqual([]);
    expect(audit.queryAudit().length).toBe(5);
  });

  it("pages with limit and before", () => {
    for (let i = 0; i < 25; i++) audit.recordAudit({ ...base, detail: `n${i}` });
    const page1 = audit.queryAudit({ limit: 10 });
    const page2 = audit.queryAudit({ limit: 10, before: page1.at(-1)!.id });
    const page3 = audit.queryAudit({ limit: 10, before: page2.at(-1)!.id });
    expect(page1.map((r) => r.detail)).toEqual(Array.from({ length: 10 }, (_, i) => `n${24 - i}`));
    expect(page2[0]!.detail).toBe("n14");
    expect(page3.map((r) => r.detail)).toEqual(["n4", "n3", "n2", "n1", "n0"]);
  });

  it("clamps the limit", () => {
    for (let i = 0; i < 3; i++) audit.recordAudit(base);
    expect(audit.queryAudit({ limit: 0 })).toHaveLength(1);
    expect(audit.queryAudit({ limit: -5 })).toHaveLength(1);
    expect(audit.queryAudit({ limit: Number.NaN })).toHaveLength(3);
    expect(audit.queryAudit({ limit: 1e9 })).toHaveLength(3);
  });

  it("stores hostile values verbatim but bounded", () => {
    const id = audit.recordAudit({ ...base, unit: "$(reboot);--help\n", reason: "r".repeat(10_000), detail: "d".repeat(100_000) });
    const row = audit.getAudit(id)!;
    expect(row.unit).toBe("$(reboot);--help\n");
    expect(row.reason!.length).toBeLessThanOrEqual(2001);
    expect(row.detail!.length).toBeLessThanOrEqual(8001);
  });

  it("prunes entries older than the retention", () => {
    audit.recordAudit(base);
    fake.advance(40 * DAY);
    audit.recordAudit(base);
    fake.advance(DAY);
    expect(audit.pruneAudit(30 * DAY)).toBe(1);
    expect(audit.queryAudit()).toHaveLength(1);
    expect(audit.pruneAudit(30 * DAY)).toBe(0);
    expect(() => audit.pruneAudit(-1)).toThrow();
    fake.advance(MINUTE);
    expect(audit.pruneAudit(0)).toBe(1);
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

  it("writes a header and one CRLF-terminated line per row, all cells quoted", () => {
    const csv = auditToCsv([row({})]);
    expect(csv).toBe(
      `${AUDIT_CSV_COLUMNS.map((c) => `"${c}"`).join(",")}\r\n` +
        `"1","2025-01-15T12:00:00.000Z","alice","operator","10.0.0.5","gpu1","vllm-a.service","restart","","done","4711",""\r\n`,
    );
  });

  it("escapes quotes, commas and line breaks so they read back unchanged", () => {
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

  it("leaves harmless text, numbers and empty cells alone", () => {
    expect(csvCell("vllm-a.service")).toBe('"vllm-a.service"');
    expect(csvCell("a=b")).toBe('"a=b"');
    expect(csvCell(-5)).toBe('"-5"');
    expect(csvCell(null)).toBe('""');
    expect(csvCell("")).toBe('""');
  });

  it("adds a BOM when asked (Excel and UTF-8)", () => {
    expect(auditToCsv([], { bom: true }).startsWith('\uFEFF"id"')).toBe(true);
    expect(auditToCsv([]).startsWith('"id"')).toBe(true);
  });

  it("round-trips rows from the store, unicode included", () => {
    const tmp = tempDataDir();
    const db = openPanelDb(tmp.dir);
    try {
      const audit = new AuditStore(db);
      audit.recordAudit({ ...base, reason: "GPU-Speicher voll — neu starten 🚀", unit: "-H evil" });
      const parsed = parseCsv(auditToCsv(audit.queryAudit()));
      expect(parsed[1]![8]).toBe("GPU-Speicher voll — neu starten 🚀");
      expect(parsed[1]![6]).toBe("'-H evil");
    } finally {
      db.close();
      tmp.cleanup();
    }
  });
});
