import { describe, expect, it } from "vitest";
import { alertTimes, deliveryWords, groupsToText, textToGroups } from "./alertTexts";

describe("alert texts", () => {
  it("an open alert says how long; a resolved one how long it lasted and when it ended", () => {
    expect(alertTimes({ sinceMs: 0, resolvedAtMs: null }, 12 * 60_000)).toBe("for 12 min");
    expect(alertTimes({ sinceMs: 0, resolvedAtMs: 5 * 60_000 }, 15 * 60_000)).toBe("lasted 5 min, resolved 10 min ago");
  });

  it("a delivery: queued, retrying with the reason and the next try, sent, failed", () => {
    const d = {
      id: 1,
      channelId: "c",
      messageId: 1,
      title: "t",
      kind: "alert" as const,
      status: "pending" as const,
      attempts: 0,
      createdAtMs: 0,
      lastAttemptAtMs: null,
      nextAttemptAtMs: 0,
      sentAtMs: null,
      lastError: null,
    };
    expect(deliveryWords(d, 0)).toBe("queued");
    expect(deliveryWords({ ...d, attempts: 2, lastError: "connect ECONNREFUSED", nextAttemptAtMs: 20_000 }, 0)).toBe(
      "retrying (2 attempts: connect ECONNREFUSED), next try in 20 s",
    );
    expect(deliveryWords({ ...d, status: "sent", attempts: 3 }, 0)).toBe("sent after 3 attempts");
    expect(deliveryWords({ ...d, status: "failed", lastError: "the receiver answered 410" }, 0)).toBe("failed: the receiver answered 410");
  });

  it("status page groups as lines of text, both ways, with a reason for a bad line", () => {
    const groups = [{ name: "Kimi K2.5 chat", units: ["gpu-a:vllm-kimi-k25.service", "gpu-b:vllm-kimi-k25.service"] }];
    expect(textToGroups(groupsToText(groups))).toEqual({ groups });
    expect(textToGroups("\n  \n")).toEqual({ groups: [] });
    expect(textToGroups("Chat = vllm.service")).toEqual({ error: 'line 1: "vllm.service" is not host:unit (e.g. gpu-a:vllm-kimi-k25.service)' });
    expect(textToGroups("just a name")).toMatchObject({ error: expect.stringMatching(/^line 1/) });
  });
});
