import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditStore } from "../auth/audit";
import { FakeClock, MINUTE, tempDataDir } from "../auth/testHelpers";
import { openStore, type Store } from "../store/database";
import { fixedStore } from "../store/lazyStore";
import { REFUSAL_FIELD_MAX, RefusalAuditLimiter, RefusalRecorder } from "./refusals";

let tmp: ReturnType<typeof tempDataDir>;
let db: Store;
let audit: AuditStore;
let clock: FakeClock;

beforeEach(async () => {
  tmp = tempDataDir();
  db = await openStore({ dataDir: tmp.dir });
  clock = new FakeClock();
  audit = new AuditStore(fixedStore(db), { clock: clock.clock });
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

const refusal = (detail = "Cross-origin request refused.") => ({ action: "restart", unit: "x.service", reason: null, outcome: "refused", detail, host: null });
const rows = () => audit.queryAudit({ limit: 1000 });

describe("refusal rows of unauthenticated requests", () => {
  it("an IPv6 /64 is one caller: rotating through its addresses buys no extra rows", async () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(3, clock.clock), () => null);
    for (let i = 1; i <= 50; i++) await recorder.record({ sourceAddr: `2001:db8:1:2::${i.toString(16)}` }, null, refusal());
    for (let i = 1; i <= 50; i++) await recorder.record({ sourceAddr: `2001:db8:1:2:${i.toString(16)}:1:2:3` }, null, refusal());
    expect(await rows()).toHaveLength(3);
    // another /64 is another caller
    await recorder.record({ sourceAddr: "2001:db8:1:3::1" }, null, refusal());
    expect(await rows()).toHaveLength(4);
    // and the next minute starts afresh
    clock.advance(MINUTE);
    await recorder.record({ sourceAddr: "2001:db8:1:2::99" }, null, refusal());
    expect(await rows()).toHaveLength(5);
  });

  it("stores only a short piece of what a refused request sent", async () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(60, clock.clock), () => null);
    await recorder.record({ sourceAddr: "10.0.0.1" }, null, {
      action: "a".repeat(5000),
      unit: "u".repeat(5000),
      reason: "r".repeat(5000),
      outcome: "refused",
      detail: "d".repeat(5000),
      host: "h".repeat(5000),
    });
    const [row] = await rows();
    expect(row!.detail!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.detail + 1);
    expect(row!.reason!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.reason + 1);
    expect(row!.unit!.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.unit + 1);
    expect(row!.action.length).toBeLessThanOrEqual(REFUSAL_FIELD_MAX.action + 1);
    expect(row!.host!.length).toBeLessThanOrEqual(101);
  });

  it("caps the rows of everyone together per minute, and says once that it did", async () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(60, clock.clock, 100), () => null);
    for (let i = 0; i < 1000; i++) await recorder.record({ sourceAddr: `10.${i >> 8}.${i & 255}.1` }, null, refusal());
    const all = await rows();
    expect(all).toHaveLength(101);
    expect(all.filter((r) => r.action === "audit.refusals")).toMatchObject([
      { outcome: "error", detail: expect.stringMatching(/more than 100 refused requests this minute/) },
    ]);
    clock.advance(MINUTE);
    await recorder.record({ sourceAddr: "10.9.9.9" }, null, refusal());
    expect(await rows()).toHaveLength(102);
  });

  it("signed-in callers are keyed by user, whatever their address", async () => {
    const recorder = new RefusalRecorder(audit, new RefusalAuditLimiter(2, clock.clock), () => null);
    const actor = { user: "Mallory", role: "viewer" as const, unitPatterns: [] };
    for (let i = 0; i < 10; i++) await recorder.record({ sourceAddr: `10.0.0.${i}` }, { ...actor, user: i % 2 ? "mallory" : "Mallory" }, refusal());
    expect(await rows()).toHaveLength(2);
  });
});
