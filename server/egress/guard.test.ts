/** The egress guard against a real HTTP listener, with a fake DNS where a test needs a name to resolve somewhere. */
import http from "node:http";
import type dns from "node:dns";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetch as undiciFetch } from "undici";
import {
  addressProblem,
  EgressConfigError,
  egressPolicyFromEnv,
  guardedAddress,
  guardedDispatcher,
  OPEN_POLICY,
  urlEgressProblem,
  type Resolver,
} from "./guard";

let server: http.Server;
let port = 0;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? "/");
    res.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

/** A DNS that answers from a table (what a rebinding name would answer at send time). */
const fakeDns =
  (table: Record<string, string>): Resolver =>
  (hostname, _options, callback) => {
    const address = table[hostname];
    if (!address) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []);
    callback(null, [{ address, family: address.includes(":") ? 6 : 4 } as dns.LookupAddress]);
  };

async function get(url: string, dispatcher: ReturnType<typeof guardedDispatcher>): Promise<string> {
  try {
    const res = await undiciFetch(url, { dispatcher });
    return `${res.status} ${await res.text()}`;
  } catch (err) {
    return `refused: ${((err as Error & { cause?: Error }).cause ?? (err as Error)).message}`;
  }
}

describe("which addresses are refused", () => {
  it("link-local and cloud metadata, in any spelling; ordinary private and public addresses pass", () => {
    for (const ip of ["169.254.169.254", "169.254.0.1", "::ffff:169.254.169.254", "fe80::1", "fd00:ec2::254", "100.100.100.200"])
      expect(addressProblem(ip, ip, OPEN_POLICY), ip).toMatch(/the panel sends nothing there/);
    for (const ip of ["10.0.0.5", "127.0.0.1", "192.168.1.2", "8.8.8.8", "::1", "fd12::1"]) expect(addressProblem(ip, ip, OPEN_POLICY), ip).toBeNull();
    expect(urlEgressProblem("http://[fd00:ec2::254]/latest", OPEN_POLICY)).toMatch(/AWS metadata/);
    expect(urlEgressProblem("http://169.254.169.254/latest/meta-data/", OPEN_POLICY)).toMatch(/^169\.254\.169\.254, a link-local address/);
  });

  it("GPUDECK_EGRESS_ALLOW: only what it names; a listed range may open a refused one; a bad entry is named", () => {
    const policy = egressPolicyFromEnv({ GPUDECK_EGRESS_ALLOW: "hooks.slack.com, *.example.com, 10.0.0.0/8, 169.254.10.0/24" });
    expect(addressProblem("34.1.2.3", "hooks.slack.com", policy)).toBeNull();
    expect(addressProblem("34.1.2.3", "ntfy.example.com", policy)).toBeNull();
    expect(addressProblem("34.1.2.3", "evil.example", policy)).toMatch(/evil\.example \(34\.1\.2\.3\) is not in GPUDECK_EGRESS_ALLOW/);
    expect(addressProblem("10.2.3.4", "10.2.3.4", policy)).toBeNull();
    expect(addressProblem("169.254.10.7", "169.254.10.7", policy)).toBeNull();
    expect(addressProblem("169.254.169.254", "hooks.slack.com", policy)).toMatch(/hooks\.slack\.com resolves to 169\.254\.169\.254, a link-local/);
    expect(() => egressPolicyFromEnv({ GPUDECK_EGRESS_ALLOW: "hooks.slack.com, http://x/" })).toThrow(EgressConfigError);
    expect(() => egressPolicyFromEnv({ GPUDECK_EGRESS_ALLOW: "10.0.0.0/99" })).toThrow(/"10\.0\.0\.0\/99" is neither a host name/);
    expect(egressPolicyFromEnv({})).toEqual(OPEN_POLICY);
  });
});

describe("connections through the guard", () => {
  it("a name that resolves to the metadata address at connect time is refused before a request is sent", async () => {
    const before = hits.length;
    const dispatcher = guardedDispatcher(OPEN_POLICY, {}, fakeDns({ "hooks.rebind.test": "169.254.169.254" }));
    expect(await get(`http://hooks.rebind.test:${port}/x`, dispatcher)).toMatch(
      /^refused: hooks\.rebind\.test resolves to 169\.254\.169\.254, a link-local address/,
    );
    expect(hits.length).toBe(before);
  });

  it("an address in the URL is refused without a lookup", async () => {
    const dispatcher = guardedDispatcher(OPEN_POLICY, {}, fakeDns({}));
    expect(await get("http://169.254.169.254/latest/meta-data/", dispatcher)).toMatch(/^refused: 169\.254\.169\.254, a link-local address/);
    expect(await get("http://[fd00:ec2::254]/latest/meta-data/", dispatcher)).toMatch(/^refused: fd00:ec2::254, the AWS metadata/);
  });

  it("control: a name that resolves to an allowed address is reached; the allow list refuses the rest", async () => {
    const dnsTable = fakeDns({ "hooks.allowed.test": "127.0.0.1", "other.test": "127.0.0.1" });
    const open = guardedDispatcher(OPEN_POLICY, {}, dnsTable);
    expect(await get(`http://hooks.allowed.test:${port}/ok`, open)).toBe("200 ok");
    expect(hits.at(-1)).toBe("/ok");
    const listed = guardedDispatcher(egressPolicyFromEnv({ GPUDECK_EGRESS_ALLOW: "hooks.allowed.test" }), {}, dnsTable);
    expect(await get(`http://hooks.allowed.test:${port}/ok2`, listed)).toBe("200 ok");
    expect(await get(`http://other.test:${port}/no`, listed)).toMatch(/^refused: other\.test \(127\.0\.0\.1\) is not in GPUDECK_EGRESS_ALLOW/);
    expect(hits).not.toContain("/no");
  });

  it("guardedAddress (SMTP's way) refuses metadata literals and gives an address for a name", async () => {
    await expect(guardedAddress("169.254.169.254", OPEN_POLICY)).rejects.toThrow(/link-local/);
    await expect(guardedAddress("localhost", OPEN_POLICY)).resolves.toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});
