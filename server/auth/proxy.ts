/**
 * Trusted reverse-proxy mode (e.g. behind oauth2-proxy): the identity comes from a header the
 * proxy sets, and is believed only when the TCP peer is one of the configured proxy addresses.
 * Off by default. The remote address must be the socket's peer address — never a value taken
 * from X-Forwarded-For or any other header. Trusting an address trusts every process that can
 * connect from it (on loopback: every local process, a compromised model server too), so the proxy
 * can also be made to prove itself with a shared secret in a header of its own (`secret`); without
 * one, trusting loopback is warned about at start (`proxyTrustWarning`). Names match local
 * accounts exactly (case included): `ADA` is not `ada`.
 */
import { BlockList, isIP } from "node:net";
import type { UserStore } from "./users";
import { usernameProblem } from "./userFields";
import { isRole, type Role } from "../contract/actors";
import { tokensEqual } from "./crypto";
import { type Principal } from "./types";

export interface ProxyAuthConfig {
  enabled: boolean;
  /** Header carrying the user name, e.g. `x-forwarded-user` or `x-auth-request-user`. */
  header: string;
  /** Proxy addresses or CIDR ranges: `127.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`. */
  trustedProxies: readonly string[];
  /** Role for a proxy-named user who has no local account; null refuses such users. */
  defaultRole: Role | null;
  /** Unit patterns for such users when defaultRole is operator. */
  defaultUnitPatterns?: readonly string[];
  /** A secret the proxy sends in `secretHeader` on every request; when set, nothing else is believed. */
  secret?: string | null;
  /** Default `x-gpudeck-proxy-secret`. */
  secretHeader?: string;
}

export const PROXY_SECRET_HEADER = "x-gpudeck-proxy-secret";

export const PROXY_AUTH_DISABLED: Readonly<ProxyAuthConfig> = Object.freeze({
  enabled: false,
  header: "x-forwarded-user",
  trustedProxies: [],
  defaultRole: null,
});

export type HeaderSource = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export function headerValues(headers: HeaderSource, name: string): string[] {
  const lower = name.toLowerCase();
  if (typeof (headers as Headers).get === "function" && typeof (headers as Headers).has === "function") {
    const value = (headers as Headers).get(lower);
    return value === null ? [] : [value];
  }
  const out: string[] = [];
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== lower || value === undefined) continue;
    if (typeof value === "string") out.push(value);
    else out.push(...value);
  }
  return out;
}

/** `::ffff:10.0.0.1` → `10.0.0.1`; strips an IPv6 zone; null when not an IP address. */
export function normaliseAddress(address: string | null | undefined): string | null {
  if (typeof address !== "string") return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const plain = mapped ? mapped[1]! : address.split("%")[0]!;
  return isIP(plain) ? plain : null;
}

/** Build the matcher; throws on an entry that is neither an address nor a CIDR range. */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim();
    const [addr, bits, extra] = entry.split("/");
    const family = isIP(addr ?? "");
    if (!addr || family === 0 || extra !== undefined) throw new Error(`trusted proxy '${raw}' is not an IP address or CIDR range`);
    const type = family === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) {
      list.addAddress(addr, type);
    } else {
      const prefix = Number(bits);
      if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128)) throw new Error(`trusted proxy '${raw}' has a bad prefix length`);
      list.addSubnet(addr, prefix, type);
    }
  }
  return list;
}

export type ProxyIdentity =
  /** Proxy mode off, or a trusted proxy sent no identity header: fall back to sessions. */
  | { kind: "none" }
  /** The header came from an address that is not a trusted proxy: ignored (worth auditing). */
  | { kind: "ignored"; reason: string }
  /** A trusted proxy named someone we refuse (unknown, disabled, malformed). */
  | { kind: "refused"; username: string | null; reason: string }
  | { kind: "user"; principal: Principal };

export class ProxyAuthenticator {
  private readonly trusted: BlockList;
  constructor(
    readonly config: Readonly<ProxyAuthConfig>,
    private readonly users: UserStore,
  ) {
    if (config.enabled) {
      if (!/^[A-Za-z0-9-]+$/.test(config.header)) throw new Error(`proxy identity header '${config.header}' is not a header name`);
      if (config.trustedProxies.length === 0) throw new Error("proxy mode needs at least one trusted proxy address");
      if (config.defaultRole !== null && !isRole(config.defaultRole)) throw new Error("proxy default role must be viewer, operator or admin");
      if (config.secret !== undefined && config.secret !== null && config.secret.length < 32)
        throw new Error("the proxy secret must be at least 32 characters");
      if (!/^[A-Za-z0-9-]+$/.test(this.secretHeader)) throw new Error(`proxy secret header '${this.secretHeader}' is not a header name`);
    }
    this.trusted = trustedProxyList(config.enabled ? config.trustedProxies : []);
  }

  get secretHeader(): string {
    return (this.config.secretHeader ?? PROXY_SECRET_HEADER).toLowerCase();
  }

  isTrustedProxy(remoteAddress: string | null | undefined): boolean {
    const addr = normaliseAddress(remoteAddress);
    if (!addr) return false;
    return this.trusted.check(addr, isIP(addr) === 4 ? "ipv4" : "ipv6");
  }

  async identify(request: { remoteAddress: string | null | undefined; headers: HeaderSource }): Promise<ProxyIdentity> {
    if (!this.config.enabled) return { kind: "none" };
    const values = headerValues(request.headers, this.config.header);
    if (!this.isTrustedProxy(request.remoteAddress)) {
      return values.length === 0
        ? { kind: "none" }
        : { kind: "ignored", reason: `identity header from untrusted address ${request.remoteAddress ?? "unknown"}` };
    }
    if (values.length === 0) return { kind: "none" };
    if (this.config.secret) {
      const sent = headerValues(request.headers, this.secretHeader);
      if (sent.length !== 1 || !tokensEqual(sent[0], this.config.secret)) {
        return { kind: "refused", username: null, reason: `identity header without the proxy's secret (${this.secretHeader} missing or wrong)` };
      }
    }
    // Repeated headers, or one joined with commas, mean someone else added a value: refuse.
    if (values.length > 1) return { kind: "refused", username: null, reason: "identity header sent more than once" };
    const username = values[0]!.trim();
    const problem = usernameProblem(username);
    if (problem) return { kind: "refused", username: null, reason: `identity header: ${problem}` };
    const user = await this.users.getUser(username);
    // accounts are unique case-insensitively; a proxy naming one in another case is refused, not mapped
    if (user && user.username !== username) {
      return {
        kind: "refused",
        username: user.username,
        reason: `identity header names '${username}', but the account is '${user.username}'; names must match exactly`,
      };
    }
    if (user) {
      if (user.disabled) return { kind: "refused", username: user.username, reason: "this account is disabled" };
      return {
        kind: "user",
        principal: { userId: user.id, username: user.username, role: user.role, unitPatterns: user.unitPatterns, via: "proxy" },
      };
    }
    if (this.config.defaultRole === null) {
      return { kind: "refused", username, reason: "no local account for this user and no default role configured" };
    }
    return {
      kind: "user",
      principal: {
        userId: null,
        username,
        role: this.config.defaultRole,
        unitPatterns: [...(this.config.defaultUnitPatterns ?? [])],
        via: "proxy",
      },
    };
  }
}

/**
 * Trusted entries that are ranges rather than one address (`10.0.0.0/8`, `fd00::/8`; `/32` and
 * `/128` are one address). With proxy sign-in on and no shared secret, everyone in such a range
 * could name any user in the identity header, so the panel refuses to start (config.ts).
 */
export function trustedProxyRanges(entries: readonly string[]): string[] {
  return entries.filter((raw) => {
    const [addr, bits] = raw.trim().split("/");
    if (bits === undefined) return false;
    return Number(bits) < (isIP(addr ?? "") === 6 ? 128 : 32);
  });
}

/** A warning for the log when trusting these proxies trusts every local process, or null. */
export function proxyTrustWarning(config: Readonly<ProxyAuthConfig>): string | null {
  if (!config.enabled || config.secret) return null;
  const list = trustedProxyList(config.trustedProxies);
  const loopback = list.check("127.0.0.1", "ipv4") || list.check("::1", "ipv6");
  if (!loopback) return null;
  return (
    `GPUDECK_TRUSTED_PROXIES trusts loopback: ANY process on this machine (a model server too) can sign in as ANY user by sending ${config.header}. ` +
    `Set GPUDECK_PROXY_SECRET_FILE to a secret the proxy sends in ${(config.secretHeader ?? PROXY_SECRET_HEADER).toLowerCase()}, so only the proxy is believed.`
  );
}
