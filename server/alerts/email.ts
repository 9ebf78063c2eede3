/**
 * Email over SMTP with nodemailer: `smtp://host:587` uses STARTTLS when the server offers it,
 * and requires it when the channel signs in (a password never crosses the network in plain text:
 * a server that offers no STARTTLS is refused), `smtps://host:465` is TLS from the first byte. One connection per message (alerts are rare;
 * nothing is kept open to a mail server), bounded by timeouts and the caller's signal.
 */
import net from "node:net";
import nodemailer from "nodemailer";
import { guardedAddress } from "../egress/guard";
import type { Channel } from "./channels";
import { DeliveryError, redactUrls } from "./deliveryError";

export const SMTP_TIMEOUT_MS = 15_000;

export async function sendEmail(channel: Channel, mail: { subject: string; text: string }, signal: AbortSignal): Promise<void> {
  const url = new URL(channel.url);
  const secure = url.protocol === "smtps:";
  const name = url.hostname.replace(/^\[|\]$/g, "");
  let address: string;
  try {
    // the egress guard, after DNS: nodemailer connects to this address; TLS still checks the name
    address = await guardedAddress(name);
  } catch (err) {
    throw new DeliveryError(redactUrls(`${(err as NodeJS.ErrnoException).code ?? "lookup"}: ${(err as Error).message}`));
  }
  const transport = nodemailer.createTransport({
    host: address,
    tls: { servername: net.isIP(name) ? undefined : name },
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    requireTLS: Boolean(channel.username),
    auth: channel.username ? { user: channel.username, pass: channel.password ?? "" } : undefined,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const abort = () => transport.close();
  signal.addEventListener("abort", abort, { once: true });
  try {
    await transport.sendMail({ from: channel.from ?? undefined, to: channel.to, subject: mail.subject, text: mail.text });
  } catch (err) {
    const e = err as Error & { responseCode?: number; code?: string };
    // nodemailer's messages carry the server's reply, never the password
    const why =
      /STARTTLS/i.test(e.message) && channel.username
        ? "the mail server offers no STARTTLS; a channel that signs in needs TLS (use smtps:// or a server that offers STARTTLS)"
        : e.responseCode
          ? `the mail server answered ${e.responseCode}: ${e.message}`
          : `${e.code ? `${e.code}: ` : ""}${e.message}`;
    throw new DeliveryError(redactUrls(signal.aborted ? "stopped: the panel is shutting down" : why));
  } finally {
    signal.removeEventListener("abort", abort);
    transport.close();
  }
}
