/**
 * One task at a time, in the order queued. Every incoming signal and every full re-read runs as
 * a task here, so tasks may await bus calls and what they emit still comes out in systemd's
 * order. Each task belongs to a connection generation; a task whose generation is no longer
 * current (the connection is gone, or the adapter closed) is dropped, and its failure ignored.
 */
export class GenerationQueue {
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly isCurrent: (gen: number) => boolean,
    /** a task of the current generation threw */
    private readonly onFailure: (gen: number, err: unknown) => void,
  ) {}

  /** Resolves (never rejects) once this task has run or been dropped. */
  enqueue(gen: number, task: () => Promise<void>): Promise<void> {
    const run = async () => {
      if (!this.isCurrent(gen)) return;
      try {
        await task();
      } catch (err) {
        if (!this.isCurrent(gen)) return;
        this.onFailure(gen, err);
      }
    };
    this.tail = this.tail.then(run, run);
    return this.tail;
  }

  /** Like enqueue, but the task's own error rejects the returned promise instead of going to onFailure. */
  enqueueAndWait(gen: number, task: () => Promise<void>): Promise<void> {
    let failure: unknown = null;
    return this.enqueue(gen, async () => {
      try {
        await task();
      } catch (err) {
        failure = err;
      }
    }).then(() => {
      if (failure) throw failure;
    });
  }

  /** Resolves once every task queued so far has run. */
  idle(): Promise<void> {
    return this.tail.catch(() => undefined);
  }
}
