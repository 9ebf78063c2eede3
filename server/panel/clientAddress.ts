/**
 * The client's address, for the audit log and the sign-in rate limits. Normally the TCP peer.
 * Behind a reverse proxy every client shares the proxy's address, so when the peer is one of
 * GPUDECK_TRUSTED_PROXIES the address is taken from `X-Forwarded-For`: the rightmost hop that is
 * not itself a trusted proxy (each trusted proxy appends the address it saw; anything left of the
 * first untrusted hop was written by the client and is ignored). From any other peer the header
 * is ignored. Trusted-proxy *sign-in* (proxy.ts) still decides on the TCP peer alone.
 */
import type { BlockList } from "node:net";
import { isIP } from "node:net";
import { normaliseAddress, trustedProxyList } from "../auth/proxy";

/** An X-Forwarded-For element as an address: `1.2.3.4`, `1.2.3.4:5678`, `[2001:db8::1]:443`, `2001:db8::1`; else null. */
export function forwardedHop(raw: string): string | null {
  let v = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(v);
  if (bracketed) v = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(v)) v = v.slice(0, v.lastIndexOf(":"));
  return isIP(v) !== 0 ? normaliseAddress(v) : null;
}

export class ClientAddressResolver {
  private readonly trusted: BlockList;
  private readonly any: boolean;

  constructor(trustedProxies: readonly string[]) {
    this.trusted = trustedProxyList(trustedProxies);
    this.any = trustedProxies.length > 0;
  }

  isTrusted(address: string | null): boolean {
    const a = normaliseAddress(address);
    return a !== null && this.any && this.trusted.check(a, isIP(a) === 4 ? "ipv4" : "ipv6");
  }

  /** The client address for a request from `peer` carrying these X-Forwarded-For values (null: unknown peer). */
  resolve(peer: string | null, forwardedFor: string | null): string | null {
    if (peer === null) return null;
    if (!this.isTrusted(peer) || !forwardedFor) return peer;
    const hops = forwardedFor.split(",").slice(-32);
    let client = normaliseAddress(peer) ?? peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = forwardedHop(hops[i]!);
      // garbage from the hop we trust least: keep the last address a trusted proxy vouched for
      if (hop === null) return client;
      client = hop;
      if (!this.isTrusted(hop)) return hop;
    }
    return client;
  }
}

const cache = new WeakMap<readonly string[], ClientAddressResolver>();

/** One resolver per trusted-proxy list (the panel's config holds one for the process). */
export function clientAddressResolver(trustedProxies: readonly string[]): ClientAddressResolver {
  let r = cache.get(trustedProxies);
  if (!r) cache.set(trustedProxies, (r = new ClientAddressResolver(trustedProxies)));
  return r;
}
