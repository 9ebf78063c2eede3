/**
 * The panel's API endpoint (`/api/trpc`) as one function, Request in, Response out: the request
 * guard, a bounded body read, then tRPC's fetch adapter with the panel's context. The Next route
 * handler calls exactly this (through `Panel.handle`), and so do the hostile-input tests.
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import type { TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { auditToCsv } from "../auth/audit";
import { createPanelContext, peerAddress, actorOf, DEMO_ACTOR } from "./context";
import type { Panel } from "./instance";
import { guardRequest, MAX_BODY_BYTES, readBodyLimited, type GuardResult } from "./requestGuard";
import { auditActionForPath, auditedErrors, errorDetail } from "./router";

const EARLY_REFUSALS = new Set<TRPCError["code"]>(["PARSE_ERROR", "METHOD_NOT_SUPPORTED", "NOT_FOUND", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"]);

export const TRPC_ENDPOINT = "/api/trpc";

type Refusal = Extract<GuardResult, { ok: false }>;

function procedurePaths(url: URL): string[] {
  const rest = url.pathname.startsWith(`${TRPC_ENDPOINT}/`) ? url.pathname.slice(TRPC_ENDPOINT.length + 1) : "";
  let decoded = rest;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    // keep it raw
  }
  return decoded.split(",").slice(0, 25);
}

/** A refusal shaped like tRPC's own errors, so the browser client shows the message. */
function refusalResponse(url: URL, refusal: Refusal): Response {
  const paths = procedurePaths(url);
  const error = (path: string) => ({
    error: {
      message: refusal.message,
      code: TRPC_ERROR_CODES_BY_KEY[refusal.code],
      data: { code: refusal.code, httpStatus: refusal.status, path },
    },
  });
  const body = url.searchParams.get("batch") === "1" ? paths.map(error) : error(paths[0] ?? "");
  return Response.json(body, { status: refusal.status, headers: { "Cache-Control": "no-store" } });
}

/** The unit a GET request names in its (first) input, for the audit row of a refusal. */
function unitFromQuery(url: URL): string | null {
  const raw = url.searchParams.get("input");
  if (!raw) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    const first = url.searchParams.get("batch") === "1" && parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>)["0"] : parsed;
    const name = first && typeof first === "object" ? (first as { name?: unknown }).name : undefined;
    return typeof name === "string" ? name : null;
  } catch {
    return null;
  }
}

/** Refused before tRPC: audited with whoever the request's session says it is (if anyone). */
function auditRefusal(req: Request, panel: Panel, url: URL, refusal: Refusal): void {
  try {
    const sourceAddr = peerAddress(req.headers);
    let actor = null;
    if (panel.config.demo) actor = DEMO_ACTOR;
    else {
      const who = panel.auth.authenticate({ remoteAddress: sourceAddr, headers: req.headers, secure: panel.config.secureCookies });
      if (who.ok) actor = actorOf(who.principal, sourceAddr);
    }
    const key = actor ? `user:${actor.user.toLowerCase()}` : `addr:${sourceAddr ?? "unknown"}`;
    if (!panel.refusalAudit.allow(key)) return;
    const origin = req.headers.get("origin") ?? req.headers.get("sec-fetch-site");
    panel.auth.audit.recordAudit({
      user: actor?.user ?? null,
      role: actor?.role ?? null,
      sourceAddr,
      host: panel.watcher.hostName,
      unit: unitFromQuery(url),
      action: procedurePaths(url).map(auditActionForPath).join(","),
      reason: null,
      outcome: "refused",
      detail: `${refusal.message} (${req.method}${origin ? `, origin ${origin.slice(0, 200)}` : ""})`,
    });
  } catch (err) {
    console.error(`[panel] could not audit a refused request: ${(err as Error).message}`);
  }
}

export async function handlePanelRequest(req: Request, panel: Panel): Promise<Response> {
  const url = new URL(req.url);
  const guard = guardRequest(req, panel.config);
  if (!guard.ok) {
    auditRefusal(req, panel, url, guard);
    return refusalResponse(url, guard);
  }
  let request = req;
  if (req.method === "POST") {
    // Content-Length can be absent (chunked) or lie: count what actually arrives.
    const body = await readBodyLimited(req, MAX_BODY_BYTES);
    if (body === null) {
      const refusal: Refusal = { ok: false, status: 413, code: "PAYLOAD_TOO_LARGE", message: `Request body over ${MAX_BODY_BYTES} bytes.` };
      auditRefusal(req, panel, url, refusal);
      return refusalResponse(url, refusal);
    }
    request = new Request(req.url, { method: "POST", headers: req.headers, body: body as Uint8Array<ArrayBuffer>, signal: req.signal });
  }
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: request,
    router: panel.router,
    createContext: ({ resHeaders }) => createPanelContext(request, panel, resHeaders),
    // per-user data: never stored by the browser or a proxy
    responseMeta: () => ({ headers: { "Cache-Control": "no-store" } }),
    onError: ({ error, path }) => {
      // Messages only (no inputs, headers or cookies): they can carry passwords and tokens.
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`[panel] ${path ?? "?"}: ${error.message}`);
      // Refused before any procedure ran (unparsable body, a mutation sent as GET, an unknown
      // procedure, input that fails validation): audit attempts to change something.
      const early = EARLY_REFUSALS.has(error.code) || (error.code === "BAD_REQUEST" && error.cause instanceof ZodError);
      if (!auditedErrors.has(error) && early && (req.method === "POST" || (path !== undefined && auditActionForPath(path) !== path))) {
        auditedErrors.add(error);
        auditRefusal(req, panel, url, { ok: false, status: getHTTPStatusCodeFromError(error), code: "BAD_REQUEST", message: errorDetail(error) });
      }
    },
  });
}

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

/**
 * `GET /api/audit.csv?user=&unit=&action=&outcome=&from=&to=`: the filtered audit log as a CSV
 * download (operators and admins). The export itself is audited.
 */
export function handleAuditCsvRequest(req: Request, panel: Panel, now = Date.now()): Response {
  const url = new URL(req.url);
  if (req.method !== "GET") return plainError(405, "Method not allowed.");
  const guard = guardRequest(req, panel.config);
  if (!guard.ok) {
    auditRefusal(req, panel, url, guard);
    return plainError(guard.status, guard.message);
  }
  const sourceAddr = peerAddress(req.headers);
  let actor = null;
  if (panel.config.demo) actor = DEMO_ACTOR;
  else {
    const who = panel.auth.authenticate({ remoteAddress: sourceAddr, headers: req.headers, secure: panel.config.secureCookies });
    if (!who.ok) return plainError(401, `Not signed in: ${who.message}.`);
    actor = actorOf(who.principal, sourceAddr);
  }
  const decision = panel.auth.can(actor, "audit.view");
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
    if (panel.refusalAudit.allow(`user:${actor.user.toLowerCase()}`)) panel.auth.audit.recordAudit({ ...base, outcome: "refused", detail: decision.reason });
    return plainError(403, `Not allowed: ${decision.reason}.`);
  }
  const rows = [];
  let before: number | undefined;
  while (rows.length < AUDIT_CSV_MAX_ROWS) {
    const page = panel.auth.audit.queryAudit({ ...filters, before, limit: 1000 });
    rows.push(...page);
    if (page.length < 1000) break;
    before = page[page.length - 1]!.id;
  }
  panel.auth.audit.recordAudit({ ...base, outcome: "ok", detail: `${rows.length} rows; filters ${JSON.stringify(filters)}` });
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
