/** Each channel type against a real receiver: an HTTP listener for webhook, Slack and ntfy, an SMTP listener for email. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AlertView, AlertWebhookPayload } from "../contract/alerts";
import type { Channel } from "./channels";
import { buildPayload } from "./message";
import { ntfyTarget, sendTo } from "./senders";
import { TestReceiver } from "./testing/receiver";
import { TestSmtpServer } from "./testing/smtpServer";

const alert = (over: Partial<AlertView> = {}): AlertView => ({
  id: 7,
  rule: "unit-failed",
  host: "gpu-b",
  unit: "vllm-a.service",
  severity: "critical",
  summary: "vllm-a.service failed (exit-code).",
  sinceMs: Date.UTC(2030, 0, 1, 3, 12),
  openedAtMs: Date.UTC(2030, 0, 1, 3, 12, 2),
  resolvedAtMs: null,
  diagnosis: {
    headline: "The main process exited with status 1 right after start.",
    severity: "critical",
    code: "main-exited",
    nextStep: "Fix the cause, then restart it.",
    evidence: [],
  },
  diagnosisUnavailable: null,
  silenced: false,
  ...over,
});

const channel = (over: Partial<Channel>): Channel => ({
  id: "ch-1",
  type: "webhook",
  name: "test",
  enabled: true,
  source: "panel",
  url: "",
  token: null,
  from: null,
  to: [],
  username: null,
  password: null,
  createdAtMs: 0,
  createdBy: null,
  ...over,
});

const payload = buildPayload([alert()], "firing", 41, "https://gpudeck.example");
const never = new AbortController().signal;

describe("senders against real receivers", () => {
  const receiver = new TestReceiver();
  const smtp = new TestSmtpServer();
  beforeAll(async () => {
    await receiver.start();
    await smtp.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await smtp.stop();
  });

  it("webhook: the payload as JSON, with its id in a header", async () => {
    await sendTo(channel({ url: receiver.url("/hook?token=s3cret") }), payload, never);
    const got = receiver.received.at(-1)!;
    expect(got.path).toBe("/hook?token=s3cret");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-gpudeck-message-id"]).toBe("gpudeck-41");
    const body = got.json as AlertWebhookPayload;
    expect(body).toMatchObject({
      schema: "gpudeck.alert.v1",
      id: "gpudeck-41",
      host: "gpu-b",
      unit: "vllm-a.service",
      rule: "unit-failed",
      state: "firing",
      since: "2030-01-01T03:12:00.000Z",
      diagnosis: { headline: "The main process exited with status 1 right after start." },
      link: "https://gpudeck.example/hosts/gpu-b/units/vllm-a.service",
      count: 1,
    });
  });

  it("slack: one text with the title, the diagnosis and a link, escaped", async () => {
    const p = buildPayload([alert({ summary: "a <b> & c" })], "firing", 42, "https://gpudeck.example");
    await sendTo(channel({ type: "slack", url: receiver.url("/services/T0/B0/xyz") }), p, never);
    const body = receiver.received.at(-1)!.json as { text: string };
    expect(Object.keys(body)).toEqual(["text"]);
    expect(body.text).toContain("*gpu-b: vllm-a.service failed*");
    expect(body.text).toContain("a &lt;b&gt; &amp; c");
    expect(body.text).toContain("Diagnosis: The main process exited");
    expect(body.text).toContain("<https://gpudeck.example/hosts/gpu-b/units/vllm-a.service|Open in gpudeck>");
  });

  it("ntfy: JSON publishing to the server root with topic, priority, click and the token", async () => {
    await sendTo(channel({ type: "ntfy", url: receiver.url("/gpudeck-alerts"), token: "tk_0123456789abcdef" }), payload, never);
    const got = receiver.received.at(-1)!;
    expect(got.path).toBe("/");
    expect(got.headers.authorization).toBe("Bearer tk_0123456789abcdef");
    expect(got.json).toMatchObject({ topic: "gpudeck-alerts", title: "gpu-b: vllm-a.service failed", priority: 5, click: payload.link });
    expect(ntfyTarget("https://ntfy.example/sub/path/topic")).toEqual({ root: "https://ntfy.example/sub/path", topic: "topic" });
  });

  it("a receiver's error is a failure whose message names the status, not the URL's secret", async () => {
    receiver.status = 500;
    try {
      await expect(sendTo(channel({ url: receiver.url("/hook/SECRET-TOKEN") }), payload, never)).rejects.toThrow(/answered 500/);
    } finally {
      receiver.status = 200;
    }
    // the delivery log keeps the status line, never the body (it may echo a secret)
    receiver.status = 502;
    receiver.answer = "upstream said: token=SECRET-IN-BODY";
    try {
      const answered = await sendTo(channel({ url: receiver.url("/hook") }), payload, never).catch((e: Error) => e);
      expect((answered as Error).message).toBe("the receiver answered 502 Bad Gateway");
    } finally {
      receiver.status = 200;
      receiver.answer = null;
    }
    // the egress guard: the metadata address is refused when sending too, naming why
    await expect(sendTo(channel({ url: "http://169.254.169.254/latest/meta-data/" }), payload, never)).rejects.toThrow(/a link-local address/);
    await expect(sendTo(channel({ type: "email", url: "smtp://169.254.169.254:25", from: "a@b.co", to: ["c@d.co"] }), payload, never)).rejects.toThrow(
      /a link-local address/,
    );
    const err = await sendTo(channel({ url: "http://127.0.0.1:1/hook/SECRET-TOKEN" }), payload, never).catch((e: Error) => e);
    expect((err as Error).message).not.toContain("SECRET-TOKEN");
  });

  it("email: delivered over SMTP with nodemailer, subject = title", async () => {
    const ch = channel({
      type: "email",
      url: `smtp://127.0.0.1:${smtp.port}`,
      from: "gpudeck@example.com",
      to: ["oncall@example.com", "ml@example.com"],
    });
    await sendTo(ch, payload, never);
    const mail = smtp.mails.at(-1)!;
    expect(mail.from).toBe("gpudeck@example.com");
    expect(mail.to).toEqual(["oncall@example.com", "ml@example.com"]);
    expect(mail.auth).toBeNull();
    expect(mail.data).toMatch(/^Subject: gpu-b: vllm-a.service failed$/m);
    expect(mail.data).toContain("Diagnosis: The main process exited");
  });

  it("email with credentials needs TLS: a server without STARTTLS never sees the password", async () => {
    const before = smtp.mails.length;
    const ch = channel({
      type: "email",
      url: `smtp://127.0.0.1:${smtp.port}`,
      from: "gpudeck@example.com",
      to: ["oncall@example.com"],
      username: "gpudeck",
      password: "mail-pass-123",
    });
    await expect(sendTo(ch, payload, never)).rejects.toThrow(/offers no STARTTLS; a channel that signs in needs TLS \(use smtps:\/\//);
    expect(smtp.mails.length).toBe(before);
    expect(smtp.sawAuth).toBe(false);
  });

  it("email to a server that is not there fails with a reason", async () => {
    const ch = channel({ type: "email", url: "smtp://127.0.0.1:1", from: "a@example.com", to: ["b@example.com"] });
    await expect(sendTo(ch, payload, never)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("grouped messages", () => {
  it("several units of one host and rule: one message naming how many, each alert inside", () => {
    const alerts = Array.from({ length: 6 }, (_, i) => alert({ id: i + 1, unit: `vllm-${i}.service` }));
    const p = buildPayload(alerts, "firing", 9, "https://gpudeck.example/");
    expect(p.title).toBe("host gpu-b: 6 units failed");
    expect(p).toMatchObject({ count: 6, unit: null, diagnosis: null, rule: "unit-failed", link: "https://gpudeck.example/hosts/gpu-b" });
    expect(p.alerts.map((a) => a.unit)).toEqual(alerts.map((a) => a.unit));
    expect(p.alerts[0]!.diagnosis?.headline).toContain("exited");
  });

  it("a resolution says so, with when", () => {
    const p = buildPayload([alert({ resolvedAtMs: Date.UTC(2030, 0, 1, 4) })], "resolved", 10, "https://gpudeck.example");
    expect(p.title).toBe("Resolved: gpu-b: vllm-a.service failed");
    expect(p.resolvedAt).toBe("2030-01-01T04:00:00.000Z");
  });
});
