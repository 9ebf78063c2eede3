/**
 * The adapter without systemd: names are refused before anything reaches D-Bus or journalctl,
 * and a missing bus is reported (and retried) instead of failing the agent.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SystemdEvent } from "../adapter";
import { createSystemdAdapter } from "./index";

describe("SystemdAdapter without a bus", () => {
  let dir = "";
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-adapter-test-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function make(events: SystemdEvent[] = [], logs: string[] = []) {
    const adapter = createSystemdAdapter({
      log: (m) => logs.push(m),
      unitGlobs: ["vllm-*.service", "tgi.service"],
      busAddress: `unix:path=${path.join(dir, "no-bus-here")}`,
      // if anything ever spawned journalctl, this would fail with "cannot run journalctl"
      journal: { journalctl: path.join(dir, "no-journalctl-here") },
      reconnect: { initialMs: 20, maxMs: 40, quietLogMs: 0 },
    });
    return { adapter, started: adapter.start((e) => events.push(e)) };
  }

  it("reports the bus as unreachable, keeps retrying, and stops retrying on close", async () => {
    const events: SystemdEvent[] = [];
    const logs: string[] = [];
    const { adapter, started } = make(events, logs);
    await started;
    expect(adapter.status().state).toBe("unreachable");
    expect(adapter.status().message).toMatch(/no-bus-here/);
    expect(adapter.list()).toEqual([]);
    expect(events[0]).toMatchObject({ type: "status", status: { state: "connecting" } });
    await new Promise((r) => setTimeout(r, 250));
    const attempts = logs.filter((l) => /reconnecting in \d+ ms/.test(l));
    expect(attempts.length).toBeGreaterThanOrEqual(4);
    expect(attempts.at(-1)).toMatch(/reconnecting in 40 ms/); // backoff capped at maxMs
    await adapter.close();
    const atClose = [events.length, logs.length];
    // (quietLogMs: 0 logs every attempt; the default logs a repeat at most once a minute)
    await new Promise((r) => setTimeout(r, 150));
    expect([events.length, logs.length]).toEqual(atClose);
  });

  it("refuses names outside the globs and invalid names before touching D-Bus or journalctl", async () => {
    const { adapter, started } = make();
    await started;
    try {
      for (const action of ["start", "stop", "restart", "reset-failed", "kill"] as const) {
        await expect(adapter.act("sshd.service", action)).rejects.toThrow(/not among the units this agent may manage/);
      }
      await expect(adapter.act("-H.service", "start")).rejects.toThrow(/invalid unit name.*must not start with '-'/);
      await expect(adapter.act("vllm-a.service; rm -rf /", "start")).rejects.toThrow(/invalid unit name/);
      await expect(adapter.act(`vllm-${"x".repeat(300)}.service`, "start")).rejects.toThrow(/longer than 255/);
      await expect(adapter.get("sshd.service")).rejects.toThrow(/not among/);
      await expect(adapter.journal("--all.service", 10)).rejects.toThrow(/invalid unit name/);
      await expect(adapter.journal("sshd.service", 10)).rejects.toThrow(/not among/);
      const it = adapter.followJournal("sshd.service", new AbortController().signal)[Symbol.asyncIterator]();
      await expect(it.next()).rejects.toThrow(/not among/);
      // an allowed name gets as far as the (missing) bus, and says so
      await expect(adapter.act("vllm-a.service", "start")).rejects.toThrow(/unreachable/);
      await expect(adapter.get("vllm-a.service")).rejects.toThrow(/unreachable/);
      // …and an allowed journal read really runs journalctl (here: a missing binary)
      await expect(adapter.journal("tgi.service", 10)).rejects.toThrow(/cannot run journalctl/);
    } finally {
      await adapter.close();
    }
  });

  it("readStates: read-only, never throws; with systemd unreachable it knows nothing of untracked units", async () => {
    const { adapter, started } = make();
    await started;
    try {
      // outside the globs is allowed here (a dependency's state), invalid names are dropped
      expect(await adapter.readStates!(["sshd.service", "-H.service", "vllm-a.service; rm -rf /"])).toEqual([]);
      // …and reading a state never opens acting on it
      await expect(adapter.act("sshd.service", "start")).rejects.toThrow(/not among/);
    } finally {
      await adapter.close();
    }
  });
});
