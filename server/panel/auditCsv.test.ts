/** The audit CSV download is streamed a page at a time, as the client reads, and its audit row says how it ended. */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AUDIT_CSV_PAGE, csvStream } from "./auditCsv";
import { PEER_HEADER } from "./context";
import { addUser, login, ORIGIN, PEER, startTestPanel, type TestPanel } from "./panelTestHarness";

let tp: TestPanel;
let cookie: string;
const ROWS = 2_500;

beforeAll(async () => {
  tp = await startTestPanel({ url: "http://127.0.0.1:9", token: "unused-token-0123456789abcdefghijklmnopq" });
  await addUser(tp.panel, "ada", "admin");
  cookie = await login(tp.panel, "ada");
  for (let i = 0; i < ROWS; i++) {
    await tp.panel.auth.audit.recordAudit({
      user: "otto",
      role: "operator",
      sourceAddr: "10.0.0.1",
      host: "gpu-a",
      unit: "vllm-a.service",
      action: "restart",
      reason: `r${i}`,
      outcome: "done",
    });
  }
});
afterAll(async () => tp?.close());

function csvRequest(query = ""): Request {
  return new Request(`${ORIGIN}/api/audit.csv${query}`, {
    headers: { host: "127.0.0.1:3000", "sec-fetch-site": "same-origin", [PEER_HEADER]: PEER, cookie },
  });
}

const exportRow = async () => (await tp.panel.auth.audit.queryAudit({ action: "audit.export", limit: 1 }))[0]!;

describe("GET /api/audit.csv", () => {
  it("answers before reading the rows, then reads one page per chunk the client takes", async () => {
    const query = vi.spyOn(tp.panel.auth.audit, "queryAudit");
    try {
      const res = await tp.panel.handleAuditCsv(csvRequest("?action=restart"));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      expect(query).not.toHaveBeenCalled();
      expect(await exportRow()).toMatchObject({ user: "ada", outcome: "pending" });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        // never more than one page ahead of what the client has read
        const lines = text.split("\r\n").length - 2;
        expect(query.mock.calls.length).toBeLessThanOrEqual(Math.ceil(lines / AUDIT_CSV_PAGE) + 1);
      }
      const lines = text.split("\r\n").filter(Boolean);
      expect(lines[0]).toBe('\uFEFF"id","time","user","role","source_addr","host","unit","action","reason","outcome","job_id","detail"');
      expect(lines).toHaveLength(ROWS + 1);
      expect(lines[1]).toContain(`"r${ROWS - 1}"`); // newest first
      expect(await exportRow()).toMatchObject({ outcome: "ok", detail: expect.stringMatching(/^2500 rows; filters /) });
    } finally {
      query.mockRestore();
    }
  });

  it("a download stopped half-way reads no further and is audited as stopped", async () => {
    const query = vi.spyOn(tp.panel.auth.audit, "queryAudit");
    try {
      const res = await tp.panel.handleAuditCsv(csvRequest());
      const reader = res.body!.getReader();
      await reader.read(); // the header
      await reader.read(); // the first page
      await reader.cancel();
      const calls = query.mock.calls.length;
      expect(calls).toBeLessThanOrEqual(2);
      expect(await exportRow()).toMatchObject({ outcome: "ok", detail: expect.stringMatching(/rows \(the download was stopped\)/) });
    } finally {
      query.mockRestore();
    }
  });

  it("stops at the row limit and says so", async () => {
    const id = await tp.panel.auth.audit.recordAudit({
      user: "ada",
      role: "admin",
      sourceAddr: null,
      host: null,
      unit: null,
      action: "audit.export",
      reason: null,
      outcome: "pending",
    });
    const text = await new Response(csvStream(tp.panel.services, {}, id, 1_500, 1000)).text();
    expect(text.split("\r\n").filter(Boolean)).toHaveLength(1_501);
    expect(await tp.panel.auth.audit.getAudit(id)).toMatchObject({
      outcome: "ok",
      detail: expect.stringMatching(/^1500 rows \(the first 1500; narrow the filters/),
    });
  });
});
