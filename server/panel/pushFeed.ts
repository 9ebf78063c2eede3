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

const pushing = new WeakSet<object>();

/** The SSE encoder marks the request's context: its procedure may yield a PushFeed. */
export function acceptPush(ctx: object): void {
  pushing.add(ctx);
}

export function acceptsPush(ctx: object): boolean {
  return pushing.has(ctx);
}
