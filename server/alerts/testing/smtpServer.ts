/**
 * Test-only: a small real SMTP server on 127.0.0.1 (EHLO, AUTH PLAIN/LOGIN, MAIL, RCPT, DATA,
 * QUIT; no TLS), recording each message with who signed in. Enough for nodemailer to deliver to.
 */
import net from "node:net";

export interface ReceivedMail {
  from: string;
  to: string[];
  /** the message as sent: headers, blank line, body */
  data: string;
  /** user:password it signed in with, when it did */
  auth: string | null;
}

export class TestSmtpServer {
  readonly mails: ReceivedMail[] = [];
  /** whether any client sent AUTH (a password in plain text) */
  sawAuth = false;
  private server: net.Server | null = null;
  port = 0;

  async start(): Promise<this> {
    this.server = net.createServer((socket) => this.session(socket));
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", () => r()));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private session(socket: net.Socket): void {
    socket.setEncoding("utf8");
    const say = (line: string) => socket.write(`${line}\r\n`);
    let buffer = "";
    let mail: ReceivedMail = { from: "", to: [], data: "", auth: null };
    let mode: "command" | "data" | "login-user" | "login-pass" = "command";
    let loginUser = "";
    say("220 test-smtp ready");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (mode === "data") {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          mail.data = buffer.slice(0, end).replace(/^\.\./gm, ".");
          buffer = buffer.slice(end + 5);
          this.mails.push(mail);
          mail = { from: "", to: [], data: "", auth: mail.auth };
          mode = "command";
          say("250 2.0.0 queued");
          continue;
        }
        const nl = buffer.indexOf("\r\n");
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        if (mode === "login-user") {
          loginUser = Buffer.from(line, "base64").toString();
          mode = "login-pass";
          say("334 UGFzc3dvcmQ6");
          continue;
        }
        if (mode === "login-pass") {
          mail.auth = `${loginUser}:${Buffer.from(line, "base64").toString()}`;
          mode = "command";
          say("235 2.7.0 authenticated");
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO") say("250-test-smtp\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME");
        else if (verb === "HELO") say("250 test-smtp");
        else if (verb === "AUTH") {
          this.sawAuth = true;
          const [, method, initial] = line.split(" ");
          if (method?.toUpperCase() === "PLAIN" && initial) {
            const [, user, pass] = Buffer.from(initial, "base64").toString().split("\u0000");
            mail.auth = `${user}:${pass}`;
            say("235 2.7.0 authenticated");
          } else if (method?.toUpperCase() === "LOGIN") {
            mode = "login-user";
            say("334 VXNlcm5hbWU6");
          } else say("504 unsupported");
        } else if (verb === "MAIL") {
          mail.from = /<([^>]*)>/.exec(line)?.[1] ?? "";
          say("250 2.1.0 ok");
        } else if (verb === "RCPT") {
          mail.to.push(/<([^>]*)>/.exec(line)?.[1] ?? "");
          say("250 2.1.5 ok");
        } else if (verb === "DATA") {
          mode = "data";
          say("354 end with .");
        } else if (verb === "RSET") {
          mail = { from: "", to: [], data: "", auth: mail.auth };
          say("250 ok");
        } else if (verb === "NOOP") say("250 ok");
        else if (verb === "QUIT") {
          say("221 bye");
          socket.end();
        } else say("502 unknown command");
      }
    });
    socket.on("error", () => undefined);
  }
}
