/**
 * `GET /api/audit.csv?user=&unit=&action=&outcome=&from=&to=`: the filtered audit log as a CSV
 * download (operators and admins), streamed one page of rows at a time as the client reads (up
 * to 50,000 rows: never all of them in memory, never one long synchronous build). The export
 * itself is audited: "pending" when it starts, then how many rows went out.
 */
import { auditCsvHeader, auditCsvLine, type AuditQuery } from "../auth/audit";
import type { PanelServices } from "./trpc";
import { auditRefusal, requestActor, type PanelEndpoint } from "./handler";
import { clientAddress, peerAddress } from "./context";
import { guardRequest } from "./requestGuard";
import { isDatabaseUnreachable, unavailableSentence } from "../store/unavailable";

export const AUDIT_CSV_MAX_ROWS = 50_000;
/** Rows read from the database per chunk of the download. */
export const AUDIT_CSV_PAGE = 1000;

/** `from`/`to` as epoch ms or anything Date parses (ISO 8601); undefined when absent or bad. */
function timeParam(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Date.parse(value);
  return Number.isFinite(n) ? n : undefined;
}

function textParam(url: URL, name: string, max: number): string | undefined {
  const v = url.searchParams.get(name)?.trim();
  return v ? v.slice(0, max) : undefined;
}

function plainError(status: number, message: string): Response {
  return new Response(`${message}\n`, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } });
}

export async function handleAuditCsvRequest(req: Request, endpoint: PanelEndpoint, now = Date.now()): Promise<Response> {
  const { config, services } = endpoint;
  const url = new URL(req.url);
  if (req.method !== "GET") return plainError(405, "Method not allowed.");
  const guard = guardRequest(req, config);
  if (!guard.ok) {
    await auditRefusal(req, endpoint, url, guard);
    return plainError(guard.status, guard.message);
  }
  try {
    return await exportCsv(req, endpoint, url, now);
  } catch (err) {
    if (!isDatabaseUnreachable(err)) throw err;
    return plainError(503, unavailableSentence(services.store.dialect, err));
  }
}

async function exportCsv(req: Request, endpoint: PanelEndpoint, url: URL, now: number): Promise<Response> {
  const { config, services } = endpoint;
  const sourceAddr = clientAddress(req.headers, config);
  const actor = await requestActor(req, endpoint, true); // a download someone asked for: activity
  if (!actor) {
    const who = await services.auth.authenticate({ remoteAddress: peerAddress(req.headers), headers: req.headers, secure: config.secureCookies });
    return plainError(401, `Not signed in: ${who.ok ? "sign in first" : who.message}.`);
  }
  const decision = services.auth.can(actor, "audit.view");
  const filters = {
    user: textParam(url, "user", 128),
    unit: textParam(url, "unit", 300),
    action: textParam(url, "action", 64),
    outcome: textParam(url, "outcome", 64),
    from: timeParam(url.searchParams.get("from")),
    to: timeParam(url.searchParams.get("to")),
  };
  const base = { user: actor.user, role: actor.role, sourceAddr, host: null, unit: filters.unit ?? null, action: "audit.export", reason: null };
  if (!decision.allowed) {
    await services.refusals.record({ sourceAddr }, actor, { ...base, outcome: "refused", detail: decision.reason });
    return plainError(403, `Not allowed: ${decision.reason}.`);
  }
  // the export's own row first: rows older than it are exported, it is not
  const auditId = await services.auth.audit.recordAudit({ ...base, outcome: "pending", detail: `filters ${JSON.stringify(filters)}` });
  const body = csvStream(services, filters, auditId, AUDIT_CSV_MAX_ROWS);
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
    .replace("T", "-");
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="gpudeck-audit-${stamp}.csv"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}

/** The CSV as a pull stream: each read takes one page from the database; the audit row says how it ended. */
export function csvStream(
  services: Pick<PanelServices, "auth">,
  filters: Omit<AuditQuery, "before" | "limit">,
  auditId: number,
  maxRows: number,
  pageSize = AUDIT_CSV_PAGE,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const { audit } = services.auth;
  let before = auditId;
  let sent = 0;
  let finished = false;
  const finish = async (outcome: string, note = "") => {
    if (finished) return;
    finished = true;
    await audit.updateAuditOutcome(auditId, outcome, { detail: `${sent} rows${note}; filters ${JSON.stringify(filters)}` }).catch((err: Error) => {
      console.error(`[panel] could not settle the audit row of a CSV export: ${err.message}`);
    });
  };
  return new ReadableStream<Uint8Array>(
    {
      start(ctl) {
        ctl.enqueue(encoder.encode(auditCsvHeader({ bom: true })));
      },
      async pull(ctl) {
        try {
          const page = await audit.queryAudit({ ...filters, before, limit: Math.min(pageSize, maxRows - sent) });
          if (page.length > 0) {
            ctl.enqueue(encoder.encode(page.map(auditCsvLine).join("")));
            sent += page.length;
            before = page[page.length - 1]!.id;
          }
          if (page.length < pageSize || sent >= maxRows) {
            await finish("ok", sent >= maxRows ? ` (the first ${maxRows}; narrow the filters for the rest)` : "");
            ctl.close();
          }
        } catch (err) {
          await finish("error", `: ${(err as Error).message}`);
          ctl.error(err);
        }
      },
      async cancel() {
        await finish("ok", " (the download was stopped)");
      },
    },
    { highWaterMark: 0 },
  );
}
