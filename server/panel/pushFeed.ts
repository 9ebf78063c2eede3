/**
 * A live stream a procedure hands to the panel's SSE writer to push, instead of yielding each
 * item through async generators (../panel/sseWriter.ts). The procedure still runs through tRPC
 * (context, auth middleware, input), yields one PushFeed, and is resumed once the feed's signal
 * aborts (the viewer left, its session ended, the panel stops) to end as it would have: return,
 * or throw the error the stream ends with. Only a caller that said it can push (the panel's own
 * SSE encoder, `acceptPush`) gets one; any other caller gets the plain generator.
 */

export interface PushItem {
  id: string;
  data: unknown;
}

/** What the writer has of the source: a fresh start after it fell behind, and leaving. */
export interface PushSubscription {
  /** the viewer's fresh snapshot (live items go on from it); what waited is dropped */
  resync(): PushItem;
  close(): void;
}

export class PushFeed {
  constructor(
    /** start delivering to `push` (the first items may come before this returns) */
    readonly attach: (push: (id: string, data: unknown) => void) => PushSubscription,
    /** aborts when the stream must end */
    readonly signal: AbortSignal,
  ) {}
}

/**
 * The mark, an enumerable symbol-keyed property of the context: tRPC hands a procedure behind
 * middleware that passes `next({ ctx })` (every panel procedure) a copy of the context made by
 * spreading it, which keeps own enumerable symbol properties (a WeakSet of the original did not:
 * events.watch was never pushed to, and took the async-generator path).
 */
const PUSH = Symbol("gpudeck.acceptsPush");

/** The SSE encoder marks the request's context: its procedure may yield a PushFeed. */
export function acceptPush(ctx: object): void {
  (ctx as Record<symbol, unknown>)[PUSH] = true;
}

export function acceptsPush(ctx: object): boolean {
  return (ctx as Record<symbol, unknown>)[PUSH] === true;
}
