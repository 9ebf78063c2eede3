/**
 * `GET /api/audit.csv?user=&unit=&action=&outcome=&from=&to=`: the filtered audit log as a CSV
 * download (operators and admins). The export itself is audited.
 */
import { auditToCsv } from "../auth/audit";
import { auditRefusal, requestActor, type PanelEndpoint } from "./handler";
import { clientAddress, peerAddress } from "./context";
import { guardRequest } from "./requestGuard";

export const AUDIT_CSV_MAX_ROWS = 50_000;

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

export function handleAuditCsvRequest(req: Request, endpoint: PanelEndpoint, now = Date.now()): Response {
  const { config, services } = endpoint;
  const url = new URL(req.url);
  if (req.method !== "GET") return plainError(405, "Method not allowed.");
  const guard = guardRequest(req, config);
  if (!guard.ok) {
    auditRefusal(req, endpoint, url, guard);
    return plainError(guard.status, guard.message);
  }
  const sourceAddr = clientAddress(req.headers, config);
  const actor = requestActor(req, endpoint, true); // a download someone asked for: activity
  if (!actor) {
    const who = services.auth.authenticate({ remoteAddress: peerAddress(req.headers), headers: req.headers, secure: config.secureCookies });
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
    services.refusals.record({ sourceAddr }, actor, { ...base, outcome: "refused", detail: decision.reason });
    return plainError(403, `Not allowed: ${decision.reason}.`);
  }
  const rows = [];
  let before: number | undefined;
  while (rows.length < AUDIT_CSV_MAX_ROWS) {
    const page = services.auth.audit.queryAudit({ ...filters, before, limit: 1000 });
    rows.push(...page);
    if (page.length < 1000) break;
    before = page[page.length - 1]!.id;
  }
  services.auth.audit.recordAudit({ ...base, outcome: "ok", detail: `${rows.length} rows; filters ${JSON.stringify(filters)}` });
  const stamp = new Date(now)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")
    .replace("T", "-");
  return new Response(auditToCsv(rows, { bom: true }), {
    status: 200,
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="gpudeck-audit-${stamp}.csv"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
