/** How the panel verifies an agent's certificate (./agentTls.ts does it); plain data, no network code. */

export interface AgentTls {
  /** PEM of the CA(s) the agent's certificate must chain to */
  ca?: string | null;
  /** SHA-256 of the agent's certificate, `AB:CD:…` (as `openssl x509 -fingerprint -sha256` prints it) */
  fingerprint?: string | null;
}

/** `SHA256 Fingerprint=AB:CD…`, `ab cd …`, `abcd…` → `AB:CD:…`; null when it is not 32 bytes of hex. */
export function normaliseFingerprint(text: string): string | null {
  const hex = text
    .trim()
    .replace(/^sha-?256(\s*fingerprint)?\s*[:=]?\s*/i, "")
    .replace(/[:\s]/g, "")
    .toUpperCase();
  return /^[0-9A-F]{64}$/.test(hex) ? hex.match(/../g)!.join(":") : null;
}
