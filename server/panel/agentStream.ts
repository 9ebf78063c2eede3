/**
 * An agent subscription (tRPC client callbacks) as an async generator for a browser stream, with
 * a bounded buffer. An agent stream that cannot (re)connect, or a browser too slow to keep up,
 * ends the browser stream with a retryable error, so the browser shows "reconnecting" and
 * resumes by event id instead of stalling silently.
 */
import { TRPCError } from "@trpc/server";
import { BoundedQueue, StreamOverflow } from "../streams/boundedQueue";
import { toPanelError, type AgentErrorContext } from "./agentErrors";

export interface SubscriptionHandlers<T> {
  onData: (d: { id: string; data: T }) => void;
  onError: (e: unknown) => void;
  onComplete: () => void;
  onConnectionStateChange: (s: { state: string; error: unknown }) => void;
}

/** Items a browser stream may fall behind by before it is cut (it then resumes by id). */
export const BROWSER_STREAM_QUEUE_LIMIT = 10_000;

export async function* agentStream<T>(
  subscribe: (handlers: SubscriptionHandlers<T>) => { unsubscribe(): void },
  signal: AbortSignal,
  where: AgentErrorContext,
  limit = BROWSER_STREAM_QUEUE_LIMIT,
): AsyncGenerator<{ id: string; data: T }> {
  const queue = new BoundedQueue<{ id: string; data: T }>(limit);
  const sub = subscribe({
    onData: (d) => queue.push(d),
    onError: (e) => queue.fail(e),
    onComplete: () => queue.end(),
    onConnectionStateChange: (s) => {
      if (s.state === "connecting" && s.error) queue.fail(s.error);
    },
  });
  try {
    yield* queue.drain(signal);
    if (!signal.aborted) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "the agent closed the stream" });
  } catch (err) {
    if (err instanceof TRPCError) throw err;
    if (err instanceof StreamOverflow) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: "this stream fell behind; reconnecting" });
    const e = toPanelError(err, where);
    // Anything but an authorization or input problem is worth retrying from the browser.
    if (e.code === "UNAUTHORIZED" || e.code === "FORBIDDEN" || e.code === "BAD_REQUEST" || e.code === "NOT_FOUND") throw e;
    throw new TRPCError({ code: e.code === "BAD_GATEWAY" ? "BAD_GATEWAY" : "SERVICE_UNAVAILABLE", message: e.message });
  } finally {
    sub.unsubscribe();
  }
}
