/**
 * The adapter's task queue: signals and re-reads run one at a time in arrival order even when
 * they await, and work of a connection that is gone is neither run nor reported as failed.
 */
import { describe, expect, it } from "vitest";
import { GenerationQueue } from "./taskQueue";

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

function makeQueue() {
  const state = { generation: 1 };
  const failures: [number, string][] = [];
  const queue = new GenerationQueue(
    (gen) => gen === state.generation,
    (gen, err) => failures.push([gen, (err as Error).message]),
  );
  return { state, failures, queue };
}

describe("GenerationQueue", () => {
  it("runs tasks one at a time, in the order queued, even when an earlier one awaits longer", async () => {
    const { queue } = makeQueue();
    const log: string[] = [];
    void queue.enqueue(1, async () => {
      log.push("a start");
      await tick(20);
      log.push("a end");
    });
    void queue.enqueue(1, async () => {
      log.push("b start");
      await tick(1);
      log.push("b end");
    });
    await queue.enqueue(1, async () => {
      log.push("c");
    });
    expect(log).toEqual(["a start", "a end", "b start", "b end", "c"]);
  });

  it("drops tasks of a generation that is no longer current, and ignores their failures", async () => {
    const { state, failures, queue } = makeQueue();
    const ran: string[] = [];
    void queue.enqueue(1, async () => {
      await tick(5);
      state.generation = 2; // the connection was lost while this task ran
      throw new Error("disconnected mid-task");
    });
    void queue.enqueue(1, async () => {
      ran.push("stale");
    });
    void queue.enqueue(2, async () => {
      ran.push("fresh");
    });
    await queue.idle();
    expect(ran).toEqual(["fresh"]);
    expect(failures).toEqual([]);
  });

  it("reports a failing task of the current generation and goes on with the next", async () => {
    const { failures, queue } = makeQueue();
    const ran: string[] = [];
    void queue.enqueue(1, async () => {
      throw new Error("call timed out");
    });
    await queue.enqueue(1, async () => {
      ran.push("next");
    });
    expect(failures).toEqual([[1, "call timed out"]]);
    expect(ran).toEqual(["next"]);
  });

  it("enqueueAndWait hands the task's error to the caller instead of onFailure", async () => {
    const { failures, queue } = makeQueue();
    await expect(
      queue.enqueueAndWait(1, async () => {
        throw new Error("Subscribe refused");
      }),
    ).rejects.toThrow("Subscribe refused");
    await expect(queue.enqueueAndWait(1, async () => {})).resolves.toBeUndefined();
    expect(failures).toEqual([]);
  });
});
