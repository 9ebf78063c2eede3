/**
 * Test-only: a push service on 127.0.0.1 (plain http; GPUDECK_PUSH_ALLOW_HTTP_LOOPBACK=1 lets the
 * panel use it) and the browser side of a subscription. `subscription()` makes what a browser's
 * `PushSubscription.toJSON()` gives — a P-256 key pair (node:crypto ECDH) and a 16-byte auth
 * secret — and every message received is decrypted with them (RFC 8291 aes128gcm, http_ece),
 * so what a test reads is what the phone would show.
 */
import { createECDH, randomBytes, type ECDH } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import ece from "http_ece";
import type { PushNotificationPayload, PushSubscriptionJson } from "../../contract/push";

export interface ReceivedPush {
  path: string;
  headers: http.IncomingHttpHeaders;
  /** the decrypted notification, or why it could not be decrypted */
  payload: PushNotificationPayload | null;
  error: string | null;
}

interface Browser {
  ecdh: ECDH;
  auth: Buffer;
}

export class LocalPushService {
  readonly received: ReceivedPush[] = [];
  /** per path: the status to answer (201 unless set; 410 = the subscription is gone) */
  readonly status = new Map<string, number>();
  private readonly browsers = new Map<string, Browser>();
  private server: http.Server | null = null;
  private port = 0;

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        const browser = this.browsers.get(path);
        let payload: PushNotificationPayload | null = null;
        let error: string | null = null;
        try {
          if (!browser) throw new Error("no such subscription");
          const plain = ece.decrypt(Buffer.concat(chunks), { version: "aes128gcm", privateKey: browser.ecdh, authSecret: browser.auth });
          payload = JSON.parse(plain.toString("utf8")) as PushNotificationPayload;
        } catch (err) {
          error = (err as Error).message;
        }
        this.received.push({ path, headers: req.headers, payload, error });
        res.writeHead(this.status.get(path) ?? 201).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** A new browser's subscription at /push/<name>, as PushSubscription.toJSON() gives it. */
  subscription(name: string): PushSubscriptionJson {
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const auth = randomBytes(16);
    const path = `/push/${name}`;
    this.browsers.set(path, { ecdh, auth });
    return {
      endpoint: `http://127.0.0.1:${this.port}${path}`,
      expirationTime: null,
      keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
    };
  }

  for(name: string): ReceivedPush[] {
    return this.received.filter((r) => r.path === `/push/${name}`);
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
