/**
 * Errors from the agent, turned into panel errors people can act on. The agent's own tRPC
 * errors keep their code and message; transport failures say which agent, and a refused bearer
 * token says where the panel's token came from (never the token).
 */
import { TRPCClientError } from "@trpc/client";
import { TRPCError } from "@trpc/server";

export interface AgentErrorContext {
  agentUrl: string;
  tokenSource: string;
}

function httpStatusOf(err: unknown): number | null {
  const meta = (err as { meta?: { response?: { status?: unknown } } } | null)?.meta;
  if (typeof meta?.response?.status === "number") return meta.response.status;
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  if (typeof cause?.code === "number") return cause.code; // eventsource's ErrorEvent
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "number") return code;
  const m = /\bstatus code \((\d{3})\)/.exec(String((err as Error | null)?.message ?? ""));
  return m ? Number(m[1]) : null;
}

export function agentErrorMessage(err: unknown, where: AgentErrorContext): string {
  const status = httpStatusOf(err);
  if (status === 401 || status === 403) {
    return `the agent at ${where.agentUrl} refused the panel's bearer token (HTTP ${status}); check GPUDECK_AGENT_TOKEN (the panel read it from ${where.tokenSource})`;
  }
  return `the agent at ${where.agentUrl} could not be reached: ${transportMessage(err)}`;
}

/**
 * The most specific words in an error's cause chain: node's fetch says "fetch failed" and keeps
 * "connect ECONNREFUSED 10.0.0.5:9300" in its cause; an SSE stream cut by the other side arrives
 * as an event without a message ("Unknown error").
 */
function transportMessage(err: unknown): string {
  const messages: string[] = [];
  let e = err as { message?: unknown; cause?: unknown; error?: unknown } | null;
  for (let depth = 0; e && typeof e === "object" && depth < 6; depth++) {
    if (typeof e.message === "string" && e.message && e.message !== "Unknown error") messages.push(e.message.replace(/^TypeError: /, ""));
    e = (e.cause ?? e.error) as typeof e;
  }
  if (messages.length === 0) return err && typeof err === "object" ? "the connection closed" : String(err);
  const last = messages.at(-1)!;
  const first = messages[0]!;
  return first.includes(last) || last.includes(first) ? (first.length >= last.length ? first : last) : `${first}: ${last}`;
}

/** Any error from calling the agent → a TRPCError for the browser. */
export function toPanelError(err: unknown, where: AgentErrorContext): TRPCError {
  if (err instanceof TRPCError) return err;
  if (err instanceof TRPCClientError) {
    const code = (err.data as { code?: TRPCError["code"] } | undefined)?.code;
    if (code) return new TRPCError({ code, message: err.message });
  }
  const status = httpStatusOf(err);
  if (status === 401 || status === 403) return new TRPCError({ code: "BAD_GATEWAY", message: agentErrorMessage(err, where) });
  return new TRPCError({ code: "SERVICE_UNAVAILABLE", message: agentErrorMessage(err, where) });
}
