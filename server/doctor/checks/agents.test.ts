/** The panel → agent check against a real HTTP(S) server standing in for an agent. */
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpGet, httpGetForAgentTls } from "../system";
import { checkAgent } from "./agents";
import { checkPublicUrl } from "./panelUrl";

const TOKEN = "k".repeat(43);
let health = { ok: true, systemd: "ok", telemetry: "ok" };
let url = "";
const server = http.createServer((req, res) => {
  if (req.url === "/healthz") return res.writeHead(200).end(JSON.stringify(health));
  if (req.url === "/metrics") return res.writeHead(req.headers.authorization === `Bearer ${TOKEN}` ? 200 : 401).end("");
  res.writeHead(404).end();
});
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("agent reachability and token", () => {
  it("passes: reachable and the token is accepted", async () => {
    expect(await checkAgent(httpGet, { name: "gpu-a", url, token: TOKEN, tokenSource: "GPUDECK_AGENT_TOKEN" })).toEqual({
      id: "agent gpu-a",
      status: "ok",
      detail: "reachable, token accepted; systemd ok, GPU telemetry ok",
    });
  });

  it("fails: the agent refuses the token, saying where it came from and never what it is", async () => {
    const wrong = "w".repeat(43);
    const r = await checkAgent(httpGet, { name: "gpu-a", url, token: wrong, tokenSource: "/etc/gpudeck/tokens/gpu-a.token" });
    expect(r).toMatchObject({ status: "error", detail: `${url} refuses the token from /etc/gpudeck/tokens/gpu-a.token` });
    expect(JSON.stringify(r)).not.toContain(wrong);
  });

  it("fails: nothing listens there", async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await checkAgent(httpGet, { name: "gpu-b", url: `http://127.0.0.1:${port}`, token: TOKEN, tokenSource: "x" });
    expect(r).toMatchObject({ status: "error", detail: `cannot reach http://127.0.0.1:${port}: ECONNREFUSED` });
    expect(r.fix).toContain("systemctl status gpudeck-agent");
  });

  it("fails: no token for it", async () => {
    expect((await checkAgent(httpGet, { name: "gpu-a", url, token: null, tokenSource: "/var/lib/gpudeck-panel/agent-token" })).detail).toContain(
      "no token for it (looked in /var/lib/gpudeck-panel/agent-token)",
    );
  });

  it("warns: reachable, but its host is degraded", async () => {
    health = { ok: true, systemd: "unreachable", telemetry: "ok" };
    expect((await checkAgent(httpGet, { name: "gpu-a", url, token: TOKEN, tokenSource: "x" })).status).toBe("warn");
    health = { ok: true, systemd: "ok", telemetry: "ok" };
  });
});

describe("an https agent with a self-signed certificate", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-doctor-tls-"));
  const [key, crt] = [path.join(dir, "agent.key"), path.join(dir, "agent.crt")];
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      key,
      "-out",
      crt,
      "-days",
      "2",
      "-subj",
      "/CN=gpu-a",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "ignore" },
  );
  const fingerprint = new X509Certificate(readFileSync(crt)).fingerprint256;
  const tlsServer = https.createServer({ key: readFileSync(key), cert: readFileSync(crt) }, (req, res) => {
    if (req.url === "/healthz") return res.writeHead(200).end(JSON.stringify({ ok: true, systemd: "ok", telemetry: "ok" }));
    res.writeHead(req.headers.authorization === `Bearer ${TOKEN}` ? 200 : 401).end("");
  });
  let tlsUrl = "";
  beforeAll(async () => {
    await new Promise<void>((r) => tlsServer.listen(0, "127.0.0.1", r));
    tlsUrl = `https://127.0.0.1:${(tlsServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => tlsServer.close(() => r())));

  it("passes through the panel's own verification when its fingerprint is pinned", async () => {
    const r = await checkAgent(httpGetForAgentTls({ fingerprint }), { name: "gpu-a", url: tlsUrl, token: TOKEN, tokenSource: "x" });
    expect(r.status).toBe("ok");
  });

  it("fails with the system's CAs only, and with a wrong pin", async () => {
    expect((await checkAgent(httpGet, { name: "gpu-a", url: tlsUrl, token: TOKEN, tokenSource: "x" })).status).toBe("error");
    const wrong = `${"AB:".repeat(31)}AB`;
    expect((await checkAgent(httpGetForAgentTls({ fingerprint: wrong }), { name: "gpu-a", url: tlsUrl, token: TOKEN, tokenSource: "x" })).status).toBe("error");
  });
});

describe("public URL", () => {
  it("passes: https behind a proxy, or loopback only", () => {
    expect(checkPublicUrl("https://gpudeck.example", "127.0.0.1").status).toBe("ok");
    expect(checkPublicUrl(null, "127.0.0.1").status).toBe("ok");
  });

  it("warns: plain HTTP on a network address", () => {
    expect(checkPublicUrl(null, "0.0.0.0")).toMatchObject({ status: "warn", detail: expect.stringContaining("passwords and session cookies travel in clear") });
    expect(checkPublicUrl("http://gpudeck.example", "127.0.0.1").status).toBe("warn");
  });
});
