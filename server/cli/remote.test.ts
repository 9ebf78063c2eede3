/**
 * The real `gpudeck` command (bin/gpudeck.js, as installed) against a real panel over HTTP with a
 * simulated GPU host behind it: it lists units, restarts one and follows it until serving, and
 * exits as documented: 0 reached, 1 failed (with the diagnosis), 2 usage, 3 timed out, 4 refused.
 */
import { execFile } from "node:child_process";
import type http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningAgent } from "../agent/main";
import { createPanelServer, stopPanelServer } from "../panel/serve";
import { addUser, hostConnected, HOST, startTestAgent, startTestPanel, type TestPanel } from "../panel/panelTestHarness";

const BIN = path.resolve(__dirname, "../../bin/gpudeck.js");
let agent: RunningAgent;
let tp: TestPanel;
let server: http.Server;
let url: string;
let token: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function gpudeck(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { NODE_ENV: "test", PATH: process.env.PATH ?? "", HOME: "/nonexistent", GPUDECK_URL: url, GPUDECK_TOKEN: token, ...env },
        encoding: "utf8",
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  agent = await startTestAgent();
  tp = await startTestPanel(agent);
  await addUser(tp.panel, "otto", "operator", ["vllm-embed-*", "vllm-llama-*"]);
  const user = (await tp.panel.auth.users.getUser("otto"))!;
  token = (await tp.panel.auth.tokens.create({ owner: user, name: "ci", kind: "personal", role: "operator", expiresInDays: 1 })).token;
  server = createPanelServer({ handle: (_req, res) => res.writeHead(404).end(), panel: tp.panel });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await hostConnected(tp.panel);
}, 30_000);

afterAll(async () => {
  if (server) await stopPanelServer(server, () => tp.panel.shutdown.abort());
  await tp?.close();
  await agent?.close();
});

describe("gpudeck against a real panel", () => {
  it("lists the host's units with state and readiness", async () => {
    // The simulated probe answers a moment after the host connects (readiness "-" until then):
    // ask again until it has, as a person would.
    await vi.waitFor(
      async () => {
        const r = await gpudeck(["units", HOST]);
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expect(r.stdout).toMatch(/^HOST\s+UNIT\s+STATE\s+SUB\s+READINESS/);
        expect(r.stdout).toMatch(new RegExp(`${HOST}\\s+vllm-embed-small\\.service\\s+active\\s+running\\s+serving`));
      },
      { timeout: 20_000, interval: 500 },
    );
  }, 30_000);

  it("restarts a unit, prints each step, and exits 0 once it serves again; audited as the token", async () => {
    const r = await gpudeck(["restart", `${HOST}:vllm-embed-small`, "--reason", "deploy 42", "--wait", "serving", "--timeout", "60s"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/vllm-embed-small\.service is active \(running\); restart sent/);
    expect(r.stdout).toMatch(/job \d+ \(restart\) queued/);
    expect(r.stdout).toMatch(/job \d+ finished: done/);
    expect(r.stdout).toMatch(/loading/);
    expect(r.stdout).toMatch(/vllm-embed-small\.service is serving/);
    const rows = await tp.panel.auth.audit.queryAudit({ action: "restart" });
    expect(rows[0]).toMatchObject({ user: "otto (ci)", reason: "deploy 42", unit: "vllm-embed-small.service" });
  }, 60_000);

  it("exits 4 with the reason when the panel refuses: a repeat within the guard window, a unit outside the token's patterns", async () => {
    const again = await gpudeck(["restart", `${HOST}:vllm-embed-small`, "--reason", "again"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/^gpudeck: refused by the panel: Confirmation required: otto \(ci\) restarted/);
    const outside = await gpudeck(["restart", `${HOST}:vllm-kimi-k25`, "--reason", "not mine"]);
    expect(outside.code).toBe(4);
    expect(outside.stderr).toMatch(/refused by the panel: Not allowed/);
  });

  it("exits 1 with the panel's diagnosis when the unit fails", async () => {
    const r = await gpudeck(["start", `${HOST}:vllm-llama-70b.service`, "--reason", "try it", "--wait", "running", "--timeout", "60s"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^gpudeck: .*(failed|ended with)/);
    expect(r.stderr).toMatch(/ — .+/); // the diagnosis sentence
  }, 60_000);

  it("exits 3 when the wait times out (the action goes on)", async () => {
    const r = await gpudeck(["stop", `${HOST}:vllm-embed-small`, "--reason", "timeout test", "--timeout", "1ms", "--confirm"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/timed out after .* waiting for vllm-embed-small\.service to be inactive/);
  });

  it("prints the unit's journal", async () => {
    const r = await gpudeck(["logs", `${HOST}:vllm-embed-small`, "--since", "1h"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:]+Z vllm-embed-small\.service/m);
  });

  it("exits 2 on usage errors, before asking the panel", async () => {
    expect((await gpudeck(["restart", `${HOST}:vllm-embed-small`, "--reason", "x", "--timeout", "soon"])).code).toBe(2);
    expect((await gpudeck(["restart", "no-colon", "--reason", "x"])).code).toBe(2);
    expect((await gpudeck(["stop", `${HOST}:x`, "--reason", "x", "--wait", "serving"])).code).toBe(2);
    const noUrl = await gpudeck(["units"], { GPUDECK_URL: "" });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/set GPUDECK_URL/);
    const help = await gpudeck(["restart", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/EXIT STATUS/);
  });

  it("exits 4 once the token is revoked", async () => {
    const [t] = await tp.panel.auth.tokens.list(null);
    await tp.panel.auth.tokens.revoke(t!.id);
    const r = await gpudeck(["units"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/revoked/);
  });
});
