/**
 * Where the panel may send a request: the egress guard for webhook, Slack and ntfy deliveries and
 * for connections to agents. Link-local addresses and cloud metadata services (169.254.0.0/16,
 * which holds 169.254.169.254; fe80::/10; AWS's fd00:ec2::254; Alibaba's 100.100.100.200) are
 * refused, because a URL an admin types (or a DNS name that later resolves there) must not turn
 * the panel into a way to read the machine's cloud credentials. The check runs where the socket
 * is made: after DNS (a `lookup` that refuses such answers) and again on the connected socket's
 * address, so a name that resolves to a public address at save time and to 169.254.169.254 at
 * send time is refused too.
 *
 * `GPUDECK_EGRESS_ALLOW` (optional): a comma-separated allow list of host names (`hooks.slack.com`,
 * `*.example.com`), addresses and CIDR ranges (`10.0.0.0/8`, `fd12::/16`). When set, the panel
 * connects only to what it names (list your agents too); a range listed explicitly may also open
 * part of the refused ranges (an agent on a link-local address).
 */
import dns from "node:dns";
import net from "node:net";
import type { TLSSocket } from "node:tls";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";

/** The addresses refused whatever the allow list's host names say. */
const REFUSED: { range: string; why: string }[] = [
  { range: "169.254.0.0/16", why: "a link-local address (cloud metadata lives at 169.254.169.254)" },
  { range: "fe80::/10", why: "an IPv6 link-local address" },
  { range: "fd00:ec2::254/128", why: "the AWS metadata service's IPv6 address" },
  { range: "100.100.100.200/32", why: "the Alibaba Cloud metadata service's address" },
];

export class EgressRefused extends Error {
  readonly code = "EGRESS_REFUSED";
}

interface Cidr {
  family: "ipv4" | "ipv6";
  address: string;
  prefix: number;
}

export interface EgressPolicy {
  /** null: no allow list (anything but the refused ranges) */
  allowHosts: string[] | null;
  allowRanges: Cidr[];
}

export const OPEN_POLICY: EgressPolicy = { allowHosts: null, allowRanges: [] };

export class EgressConfigError extends Error {}

function cidrOf(text: string): Cidr | null {
  const [addr, bits] = text.split("/");
  const family = net.isIPv4(addr!) ? "ipv4" : net.isIPv6(addr!) ? "ipv6" : null;
  if (!family) return null;
  const max = family === "ipv4" ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { family, address: addr!, prefix };
}

/** GPUDECK_EGRESS_ALLOW → a policy; an entry that is neither a host name nor an address/CIDR is an error naming it. */
export function egressPolicyFromEnv(env: Readonly<Record<string, string | undefined>>): EgressPolicy {
  const text = env.GPUDECK_EGRESS_ALLOW?.trim();
  if (!text) return OPEN_POLICY;
  const policy: EgressPolicy = { allowHosts: [], allowRanges: [] };
  for (const raw of text.split(",")) {
    const entry = raw
      .trim()
      .toLowerCase()
      .replace(/^\[|\]$/g, "");
    if (!entry) continue;
    const cidr = cidrOf(entry);
    if (cidr) policy.allowRanges.push(cidr);
    else if (/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(entry)) policy.allowHosts!.push(entry);
    else
      throw new EgressConfigError(
        `GPUDECK_EGRESS_ALLOW: "${raw.trim()}" is neither a host name (hooks.slack.com, *.example.com) nor an address or CIDR range (10.0.0.0/8)`,
      );
  }
  return policy;
}

const unbracket = (host: string) => host.replace(/^\[|\]$/g, "");

/** ::ffff:169.254.169.254 is 169.254.169.254. */
function plainAddress(ip: string): { address: string; family: "ipv4" | "ipv6" } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return { address: mapped[1]!, family: "ipv4" };
  return { address: ip, family: net.isIPv4(ip) ? "ipv4" : "ipv6" };
}

function inRanges(ip: string, ranges: readonly Cidr[]): boolean {
  const { address, family } = plainAddress(ip);
  const list = new net.BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family);
  return list.check(address, family);
}

const REFUSED_LIST = REFUSED.map((r) => ({ ...r, cidr: cidrOf(r.range)! }));

function hostAllowed(host: string, policy: EgressPolicy): boolean {
  if (policy.allowHosts === null) return true;
  const h = unbracket(host).toLowerCase().replace(/\.$/, "");
  return policy.allowHosts.some((a) => (a.startsWith("*.") ? h.endsWith(a.slice(1)) : h === a));
}

/** Why the panel may not connect to `ip` (reached as `host`); null when it may. */
export function addressProblem(ip: string, host: string, policy: EgressPolicy): string | null {
  const listed = inRanges(ip, policy.allowRanges);
  const refused = REFUSED_LIST.find((r) => inRanges(ip, [r.cidr]));
  if (refused && !listed)
    return `${host === ip ? ip : `${host} resolves to ${ip}`}, ${refused.why}; the panel sends nothing there (list the range in GPUDECK_EGRESS_ALLOW if it is really meant)`;
  if (policy.allowHosts !== null && !listed && !hostAllowed(host, policy))
    return `${host === ip ? ip : `${host} (${ip})`} is not in GPUDECK_EGRESS_ALLOW; add it there for the panel to connect to it`;
  return null;
}

/** The same, from a URL as typed (for a sentence when it is saved; the connection is checked again). */
export function urlEgressProblem(url: string, policy: EgressPolicy): string | null {
  let host: string;
  try {
    host = unbracket(new URL(url).hostname);
  } catch {
    return null;
  }
  if (net.isIP(host)) return addressProblem(host, host, policy);
  if (policy.allowHosts !== null && !hostAllowed(host, policy) && policy.allowRanges.length === 0)
    return `${host} is not in GPUDECK_EGRESS_ALLOW; add it there for the panel to connect to it`;
  return null;
}

/** dns.lookup's shape with `all: true` (tests give a fake DNS). */
export type Resolver = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that refuses answers the policy forbids. */
export function guardedLookup(policy: EgressPolicy, resolve: Resolver = dns.lookup) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      for (const a of list) {
        const problem = addressProblem(a.address, hostname, policy);
        if (problem) return callback(new EgressRefused(problem), []);
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/**
 * One address for `host` that the policy allows (for clients that take an address, not a lookup:
 * SMTP through nodemailer connects to what this returns, with the name kept for TLS).
 */
export async function guardedAddress(host: string, policy: EgressPolicy = egressPolicy()): Promise<string> {
  const name = unbracket(host);
  if (net.isIP(name)) {
    const problem = addressProblem(name, name, policy);
    if (problem) throw new EgressRefused(problem);
    return name;
  }
  return new Promise((resolve, reject) =>
    guardedLookup(policy)(name, { all: true }, (err, addresses) => {
      if (err) return reject(err);
      resolve((addresses as dns.LookupAddress[])[0]!.address);
    }),
  );
}

export interface GuardedTls {
  ca?: string | null;
  /** check the connected socket's certificate (agentTls.ts's pin); an error refuses the connection */
  verify?: (socket: TLSSocket) => Error | null;
  rejectUnauthorized?: boolean;
  maxCachedSessions?: number;
}

/** An undici dispatcher whose every connection passes the guard (and, for https, `tls`'s checks). */
export function guardedDispatcher(policy: EgressPolicy, tls: GuardedTls = {}, resolve?: Resolver): Agent {
  const base = buildConnector({
    lookup: guardedLookup(policy, resolve),
    ca: tls.ca ?? undefined,
    rejectUnauthorized: tls.rejectUnauthorized,
    maxCachedSessions: tls.maxCachedSessions,
  } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    const host = unbracket(opts.hostname);
    // an address in the URL is not looked up: check it before a packet is sent
    const early = net.isIP(host) ? addressProblem(host, host, policy) : null;
    if (early) return callback(new EgressRefused(early), null);
    base(opts, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error("no connection"), null);
      const problem = socket.remoteAddress ? addressProblem(socket.remoteAddress, host, policy) : null;
      const refused = problem ? new EgressRefused(problem) : (tls.verify?.(socket as TLSSocket) ?? null);
      if (refused) {
        socket.destroy();
        return callback(refused, null);
      }
      callback(null, socket);
    });
  };
  return new Agent({ connect });
}

let current: { policy: EgressPolicy; dispatcher: Agent } | null = null;

/** The process's policy (the panel sets it from GPUDECK_EGRESS_ALLOW at start). */
export function setEgressPolicy(policy: EgressPolicy): void {
  current = { policy, dispatcher: guardedDispatcher(policy) };
}

export function egressPolicy(): EgressPolicy {
  return current?.policy ?? OPEN_POLICY;
}

/** fetch through the guard (the process's policy), for requests with no TLS options of their own. */
export const guardedFetch: typeof fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
  current ??= { policy: OPEN_POLICY, dispatcher: guardedDispatcher(OPEN_POLICY) };
  return undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: current.dispatcher });
}) as unknown as typeof fetch;
