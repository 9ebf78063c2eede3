/**
 * The panel's API endpoint (`/api/trpc`) as one function, Request in, Response out: the request
 * guard, a bounded body read, then tRPC's fetch adapter with the panel's context. The Next route
 * handler calls exactly this (through `Panel.handle`), and so do the hostile-input tests.
 * Refusals are audited once: the `audited` middleware records what reaches a procedure, this
 * file what tRPC refuses before any procedure runs, and what the request guard refuses.
 */
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import type { TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import type { Actor } from "../contract/actors";
import type { PanelConfig } from "./config";
import { bearerRefusal, bearerSecret } from "./bearer";
import { actorOf, clientAddress, createPanelContext, DEMO_ACTOR, peerAddress } from "./context";
import { eventStreamResponse } from "./eventStream";
import { auditActionForPath } from "./refusals";
import { guardRequest, MAX_BODY_BYTES, readBodyLimited, type GuardResult } from "./requestGuard";
import { panelRouter } from "./router";
import { errorDetail, type PanelContext, type PanelServices } from "./trpc";

/** What the endpoint is built from (./instance.ts makes one per process). */
export interface PanelEndpoint {
  config: PanelConfig;
  services: PanelServices;
}

/** Errors tRPC raises before any procedure (and so before its `audited` middleware) runs. */
const BEFORE_ANY_PROCEDURE = new Set<TRPCError["code"]>(["PARSE_ERROR", "METHOD_NOT_SUPPORTED", "UNSUPPORTED_MEDIA_TYPE", "PAYLOAD_TOO_LARGE"]);

const isProcedure = (path: string | undefined): boolean => path !== undefined && Object.hasOwn(panelRouter._def.procedures, path);

const procedureType = (path: string | undefined): string | undefined =>
  path === undefined ? undefined : (panelRouter._def.procedures as unknown as Record<string, { _def: { type: string } } | undefined>)[path]?._def.type;

const isMutation = (path: string | undefined): boolean => procedureType(path) === "mutation";

export const TRPC_ENDPOINT = "/api/trpc";

export type Refusal = Extract<GuardResult, { ok: false }>;

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
function refusalResponse(url: URL, refusal: Refusal & { retryAfterS?: number }): Response {
  const paths = procedurePaths(url);
  const error = (path: string) => ({
    error: {
      message: refusal.message,
      code: TRPC_ERROR_CODES_BY_KEY[refusal.code],
      data: { code: refusal.code, httpStatus: refusal.status, path },
    },
  });
  const body = url.searchParams.get("batch") === "1" ? paths.map(error) : error(paths[0] ?? "");
  const retry: Record<string, string> = refusal.retryAfterS === undefined ? {} : { "Retry-After": String(refusal.retryAfterS) };
  return Response.json(body, { status: refusal.status, headers: { "Cache-Control": "no-store", ...retry } });
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

/** Whoever the request's session (or demo mode) says is asking, if anyone; for refusal records. */
export async function requestActor(req: Request, { config, services }: PanelEndpoint, touch = false): Promise<Actor | null> {
  if (config.demo) return DEMO_ACTOR;
  const secret = bearerSecret(req.headers);
  if (secret !== undefined) {
    const token = await services.auth.tokens.authenticate(secret, { touch: false });
    return token.ok ? actorOf(token.principal, clientAddress(req.headers, config)) : null;
  }
  const who = await services.auth.authenticate({ remoteAddress: peerAddress(req.headers), headers: req.headers, secure: config.secureCookies, touch });
  // a session that must enrol in two-factor sign-in first may do nothing else (./context.ts)
  if (!who.ok || ("enrolTwoFactor" in who && who.enrolTwoFactor)) return null;
  return actorOf(who.principal, clientAddress(req.headers, config));
}

/** Refused before any procedure ran: audited with whoever the request's session says it is (if anyone). */
export async function auditRefusal(req: Request, endpoint: PanelEndpoint, url: URL, refusal: Refusal): Promise<void> {
  try {
    const origin = req.headers.get("origin") ?? req.headers.get("sec-fetch-site");
    const actor = await requestActor(req, endpoint);
    const sourceAddr = clientAddress(req.headers, endpoint.config);
    if (!actor && procedurePaths(url).every((p) => p === "setup.complete")) {
      // public, repeatable at will: the harder cap of anonymous refusals
      await endpoint.services.refusals.recordAnonymous({ action: "setup", sourceAddr, user: null, reason: refusal.message });
      return;
    }
    await endpoint.services.refusals.record({ sourceAddr }, actor, {
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

export async function handlePanelRequest(req: Request, endpoint: PanelEndpoint): Promise<Response> {
  const url = new URL(req.url);
  const guard = guardRequest(req, endpoint.config);
  if (!guard.ok) {
    await auditRefusal(req, endpoint, url, guard);
    return refusalResponse(url, guard);
  }
  // a batch is one request for many calls: capped (GPUDECK_BATCH_MAX), refused whole with a sentence
  const batchMax = endpoint.config.batchMax;
  const calls = url.searchParams.get("batch") === "1" ? url.pathname.split(",").length : 1;
  if (calls > batchMax) {
    const refusal: Refusal = {
      ok: false,
      status: 400,
      code: "BAD_REQUEST",
      message: `A batch of ${calls} calls is over this panel's limit of ${batchMax} (GPUDECK_BATCH_MAX); send fewer calls in one request.`,
    };
    await auditRefusal(req, endpoint, url, refusal);
    return refusalResponse(url, refusal);
  }
  const bearer = await bearerRefusal(req, endpoint.services);
  if (bearer) {
    // a flood of requests over the limit is not written row by row
    if (bearer.code !== "TOO_MANY_REQUESTS") await auditRefusal(req, endpoint, url, bearer);
    return refusalResponse(url, bearer);
  }
  // a subscription (one, not batched): tRPC runs it, ./eventStream.ts writes its SSE frames
  const paths = procedurePaths(url);
  if (req.method === "GET" && !url.searchParams.has("batch") && paths.length === 1 && procedureType(paths[0]) === "subscription") {
    const resHeaders = new Headers({ "Cache-Control": "no-store" });
    let ctx: PanelContext | null = null;
    let contextError: unknown;
    try {
      ctx = await createPanelContext(req, endpoint, resHeaders);
    } catch (err) {
      contextError = err;
    }
    return eventStreamResponse({ router: panelRouter, path: paths[0]!, req, url, ctx, contextError, resHeaders });
  }
  let request = req;
  if (req.method === "POST") {
    // Content-Length can be absent (chunked) or lie: count what actually arrives.
    const body = await readBodyLimited(req, MAX_BODY_BYTES);
    if (body === null) {
      const refusal: Refusal = { ok: false, status: 413, code: "PAYLOAD_TOO_LARGE", message: `Request body over ${MAX_BODY_BYTES} bytes.` };
      await auditRefusal(req, endpoint, url, refusal);
      return refusalResponse(url, refusal);
    }
    request = new Request(req.url, { method: "POST", headers: req.headers, body: body as Uint8Array<ArrayBuffer>, signal: req.signal });
  }
  // refusals noticed in onError (which tRPC does not await): written before the response goes out
  const refusalsWritten: Promise<void>[] = [];
  const response = await fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req: request,
    router: panelRouter,
    maxBatchSize: batchMax,
    createContext: ({ resHeaders }) => createPanelContext(request, endpoint, resHeaders),
    // per-user data: never stored by the browser or a proxy
    responseMeta: () => ({ headers: { "Cache-Control": "no-store" } }),
    onError: ({ error, path, ctx }) => {
      // Messages only (no inputs, headers or cookies): they can carry passwords and tokens.
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`[panel] ${path ?? "?"}: ${error.message}`);
      // Refused before any procedure ran (unparsable body, a mutation sent as GET, an unknown
      // procedure, input that fails validation): audit attempts to change something. A call whose
      // `audited` middleware ran has recorded its refusal already.
      if (path !== undefined && (ctx as Partial<PanelContext> | undefined)?.panelRequest?.auditedCalls.has(path)) return;
      const reachedProcedure = !BEFORE_ANY_PROCEDURE.has(error.code) && isProcedure(path);
      const early = !reachedProcedure || (error.code === "BAD_REQUEST" && error.cause instanceof ZodError);
      if (early && (req.method === "POST" || isMutation(path))) {
        refusalsWritten.push(
          auditRefusal(req, endpoint, url, { ok: false, status: getHTTPStatusCodeFromError(error), code: "BAD_REQUEST", message: errorDetail(error) }),
        );
      }
    },
  });
  await Promise.all(refusalsWritten);
  return response;
}
