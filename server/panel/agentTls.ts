/**
 * HTTPS to an agent on another machine, verified two ways (per host, in GPUDECK_AGENTS_FILE or
 * GPUDECK_AGENT_CA_FILE / GPUDECK_AGENT_FINGERPRINT): against a CA file (the agent's certificate
 * chains to it and names the host in the URL), or by pinning the certificate's SHA-256
 * fingerprint (a self-signed certificate is then accepted only if it is exactly that one; with a
 * CA as well, both must hold). Node's fetch cannot take either per request, so these hosts are
 * called with undici's fetch and an Agent whose connector checks the pin.
 */
import type { TLSSocket } from "node:tls";
import { fetch as undiciFetch } from "undici";
import { egressPolicy, guardedDispatcher } from "../egress/guard";
import { normaliseFingerprint, type AgentTls } from "./tlsPin";

export type { AgentTls } from "./tlsPin";

export class PinMismatch extends Error {}

/**
 * A fetch for one agent: through the egress guard (../egress/guard.ts: no link-local or metadata
 * address, GPUDECK_EGRESS_ALLOW), verifying its certificate as `tls` says when given.
 */
export function agentFetch(tls: AgentTls | null = null): typeof fetch {
  const pin = tls?.fingerprint ? normaliseFingerprint(tls.fingerprint) : null;
  if (tls?.fingerprint && !pin) throw new Error("the agent's fingerprint is not a SHA-256 fingerprint (64 hex digits)");
  // A pinned self-signed certificate is signed by no CA: the pin is the check then. No TLS session
  // reuse when pinning: a resumed session shows no certificate to compare.
  const dispatcher = guardedDispatcher(egressPolicy(), {
    ca: tls?.ca ?? null,
    rejectUnauthorized: !pin || Boolean(tls?.ca),
    maxCachedSessions: pin ? 0 : undefined,
    verify: pin
      ? (socket: TLSSocket) => {
          const seen = socket.getPeerCertificate?.()?.fingerprint256 ?? "(none)";
          return seen === pin ? null : new PinMismatch(`the agent's certificate (SHA-256 ${seen}) is not the pinned one (${pin})`);
        }
      : undefined,
  });
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher })) as unknown as typeof fetch;
}
