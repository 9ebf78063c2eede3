/** Live streams are capped per session and per panel; a stream beyond that gets a clear error and holds nothing. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningAgent } from "../agent/main";
import {
  addUser,
  HOST,
  hostConnected,
  login,
  openEventStream,
  panelRequest,
  readSse,
  startTestAgent,
  startTestPanel,
  type TestPanel,
} from "./panelTestHarness";

let agent: RunningAgent;
beforeAll(async () => {
  agent = await startTestAgent();
}, 30_000);
afterAll(async () => {
  await agent?.close();
});

type Stream = Awaited<ReturnType<typeof openEventStream>>;

async function refusal(tp: TestPanel, cookie: string | null): Promise<string> {
  const res = await tp.panel.handle(panelRequest("events.watch", { sse: true, input: { watch: "host", host: HOST }, cookie }));
  return readSse(res, (t) => /serialized-error\ndata: [^\n]*\n/.test(t), 5000);
}

describe("stream caps with sign-in", () => {
  let tp: TestPanel;
  const open: Stream[] = [];
  beforeAll(async () => {
    tp = await startTestPanel(agent, { env: { GPUDECK_STREAMS_PER_SESSION: "3", GPUDECK_STREAMS_MAX: "5" } });
    await addUser(tp.panel, "ada", "admin");
    await addUser(tp.panel, "vera", "viewer");
    await hostConnected(tp.panel);
  });
  afterAll(async () => {
    await Promise.all(open.map((s) => s.close()));
    await tp?.close();
  });

  it("refuses a session's 4th stream with a clear error; a closed one frees its slot", async () => {
    const a1 = await login(tp.panel, "ada");
    for (let i = 0; i < 3; i++) {
      const s = await openEventStream(tp.panel, a1);
      await s.until(/"kind":"host-snapshot"/);
      open.push(s);
    }
    expect(await refusal(tp, a1)).toMatch(/This session already has 3 live streams open \(at most 3, GPUDECK_STREAMS_PER_SESSION\)/);
    await open.pop()!.close();
    await expect.poll(() => tp.panel.streams.openCount, { timeout: 5000 }).toBe(2);
    const again = await openEventStream(tp.panel, a1);
    await again.until(/"kind":"host-snapshot"/);
    open.push(again);
  });

  it("another session has its own budget, up to the panel's total", async () => {
    const a2 = await login(tp.panel, "ada");
    for (let i = 0; i < 2; i++) {
      const s = await openEventStream(tp.panel, a2);
      await s.until(/"kind":"host-snapshot"/);
      open.push(s);
    }
    const vera = await login(tp.panel, "vera");
    expect(await refusal(tp, vera)).toMatch(/The panel has 5 live streams open, its limit \(GPUDECK_STREAMS_MAX\)/);
    expect(tp.panel.streams.openCount).toBe(5);
  });
});

describe("stream caps in demo mode (one shared identity)", () => {
  it("only the panel's total applies", async () => {
    const tp = await startTestPanel(agent, { env: { GPUDECK_DEMO: "1", GPUDECK_STREAMS_PER_SESSION: "1", GPUDECK_STREAMS_MAX: "3" } });
    const open: Stream[] = [];
    try {
      await hostConnected(tp.panel);
      for (let i = 0; i < 3; i++) {
        const s = await openEventStream(tp.panel, "");
        await s.until(/"kind":"host-snapshot"/);
        open.push(s);
      }
      expect(await refusal(tp, null)).toMatch(/The panel has 3 live streams open/);
    } finally {
      await Promise.all(open.map((s) => s.close()));
      await tp.close();
    }
  });
});
