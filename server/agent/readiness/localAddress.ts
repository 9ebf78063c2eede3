/**
 * Probes go only to this host: loopback, or an address of one of its own interfaces. An engine
 * bound to all addresses is probed on loopback; one bound elsewhere (another machine, a name
 * the agent would have to resolve) is not probed at all.
 */
import { isIP } from "node:net";
import os from "node:os";

/** Addresses of this machine's interfaces (read each time: interfaces come and go). */
export function localAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) out.add(a.address.replace(/%.*$/, "").toLowerCase());
  return out;
}

export function isLoopback(ip: string): boolean {
  const v = ip.toLowerCase();
  if (isIP(v) === 4) return v.startsWith("127.");
  return v === "::1" || /^::ffff:127\./.test(v);
}

/** May a probe go to `hostname` (a URL's hostname, IPv6 with or without brackets)? */
export function isHostLocal(hostname: string, local: Set<string> = localAddresses()): boolean {
  const h = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 0) return false; // a name would need DNS, which could point anywhere
  return isLoopback(h) || local.has(h);
}

/**
 * The address to probe an engine at, from the address it binds: all addresses → loopback; a
 * host-local address as it is (IPv6 bracketed for a URL); anything else → a problem in words.
 */
export function probeHost(bind: string, local?: Set<string>): { host: string; problem: string | null } {
  const b = bind.trim().replace(/^\[|\]$/g, "");
  if (b === "" || b === "0.0.0.0" || b === "*" || b === "localhost") return { host: "127.0.0.1", problem: null };
  if (b === "::") return { host: "[::1]", problem: null };
  if (!isHostLocal(b, local)) {
    return {
      host: "",
      problem: `it listens on ${bind}, which is not a loopback or host-local address; set probeUrl in GPUDECK_READINESS to probe it`,
    };
  }
  return { host: isIP(b) === 6 ? `[${b}]` : b, problem: null };
}
