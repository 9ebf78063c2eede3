import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditStore } from "../auth/audit";
import { openPanelDb, type PanelDb } from "../auth/db";
import { FakeClock, MINUTE, tempDataDir } from "../auth/testHelpers";
import { REFUSAL_FIELD_MAX, RefusalAuditLimiter, RefusalRecorder } from "./refusals";

let tmp: ReturnType<typeof tempDataDir>;
let db: PanelDb;
let audit: AuditStore;
let clock: FakeClock;

beforeEach(() => {
  tmp = tempDataDir();
  db = openPanelDb(tmp.dir);
  clock = new FakeClock();
  audit = new AuditStore(db, { clock: clock.clock });
});
afterEach(() => {
  db.close();
  tmp.cleanup();
});

const refusal = (detail = "Cross-origin request refused.") => ({ action: "restart", unit: "x.service", reason: null, outcome: "refused", detail, host: null });
const rows = () => audit.queryAudit({ limit: 1000 });

describe("refusal rows of unauthenticated requests", () => {
  it("an IPv6 /64 is one caller: rotating through its addresses buys no extra rows", () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(3, clock.clock), () => null);
    for (let i = 1; i <= 50; i++) recorder.record({ sourceAddr: `2001:db8:1:2::${i.toString(16)}` }, null, refusal());
    for (let i = 1; i <= 50; i++) recorder.record({ sourceAddr: `2001:db8:1:2:${i.toString(16)}:1:2:3` }, null, refusal());
    expect(rows()).toHaveLength(3);
    // another /64 is another caller
    recorder.record({ sourceAddr: "2001:db8:1:3::1" }, null, refusal());
    expect(rows()).toHaveLength(4);
    // and the next minute starts afresh
    clock.advance(MINUTE);
    recorder.record({ sourceAddr: "2001:db8:1:2::99" }, null, refusal());
    expect(rows()).toHaveLength(5);
  });

  it("stores only a short piece of what a refused request sent", () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(60, clock.clock), () => null);
    recorder.record({ sourceAddr: "10.0.0.1" }, null, {
      action: "a".repeat(5000),
      unit: "u".repeat(5000),
      reason: "r".repeat(5000),
      outcome: "refused",
      detail: "d".repeat(5000),
      host: "h".repeat(5000),
    });
    const [row] = rows();
    expect(row!.detail!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.detail + 1);
    expect(row!.reason!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.reason + 1);
    expect(row!.unit!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.unit + 1);
    expect(row!.action.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.action + 1);
    expect(row!.host!.length).toBeLessThanOrEqual(101);
  });

  it("caps the rows of everyone together per minute, and says once that it did", () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(60, clock.clock, 100), () => null);
    for (let i = 0; i < 1000; i++) recorder.record({ sourceAddr: `10.${i >> 8}.${i & 255}.1` }, null, refusal());
    const all = rows();
    expect(all).toHaveLength(101);
    expect(all.filter((r) => r.action === "audit.refusals")).toMatchObject([
      { outcome: "error", detail: expect.stringMatching(/more than 100 refused requests this minute/) },
    ]);
    clock.advance(MINUTE);
    recorder.record({ sourceAddr: "10.9.9.9" }, null, refusal());
    expect(rows()).toHaveLength(102);
  });

  it("signed-in callers are keyed by user, whatever their address", () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(2, clock.clock), () => null);
    const actor = { user: "Mallory", role: "viewer" as const, unitPatterns: [] };
    for (let i = 0; i < 10; i++) recorder.record({ sourceAddr: `10.0.0.${i}` }, { ...actor, user: i % 2 ? "mallory" : "Mallory" }, refusal());
    expect(rows()).toHaveLength(2);
  });
});
