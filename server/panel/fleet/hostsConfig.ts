/**
 * Which agents the panel watches, from its environment:
 * - `GPUDECK_AGENTS_FILE`: a JSON list, `[{"name": "gpu-a", "url": "http://10.0.0.5:9300",
 *   "tokenFile": "/etc/gpudeck/gpu-a.token"}, …]` (or `"token"` inline). Names are DNS-label-like
 *   and unique; an error names the entry and the key. An `https://` agent may name `"caFile"` (PEM
 *   its certificate must chain to) and/or `"fingerprint"` (its certificate's SHA-256, pinned).
 * - `GPUDECK_AGENTS_JSON`: the same list as JSON text (what the config file's [[hosts]] become).
 * - otherwise `GPUDECK_AGENT_URL` + `GPUDECK_AGENT_TOKEN` (default: `<data dir>/agent-token`, as a
 *   local agent writes it): one host, named `GPUDECK_AGENT_NAME` or after the agent's address
 *   (this machine's name for a loopback agent); GPUDECK_AGENT_CA_FILE / GPUDECK_AGENT_FINGERPRINT
 *   as caFile / fingerprint above.
 * Hosts added on the Hosts page live in the panel database (./hostStore.ts) and are merged in.
 * A token is never logged and never sent to a browser: errors say where it came from.
 */
import { readFileSync } from "node:fs";
import { hostname as osHostname } from "node:os";
import path from "node:path";
import { z } from "zod";
import { hostNameProblem, type HostSource } from "../../contract/fleet";
import { agentTokenProblem } from "../../contract/agentToken";
import { agentUrlSchema } from "../../contract/schemas";
import { normaliseFingerprint, type AgentTls } from "../tlsPin";

export interface HostConfig {
  name: string;
  url: string;
  token: string | null;
  /** where the token came from, for messages (never the token) */
  tokenSource: string;
  source: HostSource;
  /** https: a CA to verify the agent with, or its pinned certificate (none: the system's CAs) */
  tls?: AgentTls | null;
  /** plain http to an agent that is not on loopback is meant (`insecure_http`); otherwise refused */
  insecureHttp?: boolean;
}

export class HostsConfigError extends Error {}

const entrySchema = z
  .object({
    name: z.string(),
    url: agentUrlSchema,
    token: z.string().max(1000).optional(),
    tokenFile: z.string().min(1).max(4096).optional(),
    caFile: z.string().min(1).max(4096).optional(),
    fingerprint: z.string().max(200).optional(),
    /** plain http to an agent off loopback is meant (the config file's insecure_http = true) */
    insecureHttp: z.boolean().optional(),
  })
  .strict();

/** 127.0.0.0/8, ::1, localhost: plain http never leaves the machine. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
    return host === "localhost" || host.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::1";
  } catch {
    return false;
  }
}

/**
 * Plain http to an agent that is not on loopback carries the bearer token and every action
 * readable on the network: refused unless the host says it is meant (insecure_http).
 */
export function plainHttpProblem(url: string, insecureHttp: boolean | undefined): string | null {
  if (!url.startsWith("http://") || isLoopbackUrl(url) || insecureHttp) return null;
  return (
    `${url} is plain HTTP to an agent that is not on this machine: its token and every action would cross the network readable. ` +
    "Use https:// (the agent's GPUDECK_AGENT_TLS_CERT/KEY), or set insecure_http = true for this host (insecureHttp: true on the Hosts page, GPUDECK_AGENT_INSECURE_HTTP=1 for GPUDECK_AGENT_URL) if the network is trusted"
  );
}

/** caFile / fingerprint of one agent: only for https, the CA read now, the fingerprint normalised. */
export function agentTlsFrom(url: string, caFile: string | undefined, fingerprint: string | undefined, what: string, baseDir?: string): AgentTls | null {
  if (caFile === undefined && fingerprint === undefined) return null;
  if (!url.startsWith("https://"))
    throw new HostsConfigError(`${what}: a CA file or fingerprint needs an https:// url (the agent serves TLS with GPUDECK_AGENT_TLS_CERT/KEY)`);
  let ca: string | null = null;
  if (caFile !== undefined) {
    const file = baseDir === undefined ? path.resolve(/*turbopackIgnore: true*/ caFile) : path.resolve(/*turbopackIgnore: true*/ baseDir, caFile);
    try {
      ca = readFileSync(/*turbopackIgnore: true*/ file, "utf8");
    } catch (err) {
      throw new HostsConfigError(`${what}: cannot read caFile ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    if (!ca.includes("-----BEGIN CERTIFICATE-----")) throw new HostsConfigError(`${what}: caFile ${file} holds no PEM certificate`);
  }
  let pin: string | null = null;
  if (fingerprint !== undefined) {
    pin = normaliseFingerprint(fingerprint);
    if (!pin)
      throw new HostsConfigError(
        `${what}: fingerprint is not a SHA-256 fingerprint (64 hex digits, e.g. from: openssl x509 -noout -fingerprint -sha256 -in cert.pem)`,
      );
  }
  return { ca, fingerprint: pin };
}

/** A DNS label made from any text ("GPU_Node.7" → "gpu-node-7"); "local" when nothing is left. */
export function hostNameFrom(text: string): string {
  const label = text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return label || "local";
}

function readToken(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(/*turbopackIgnore: true*/ file, "utf8");
  } catch (err) {
    throw new HostsConfigError(`${what}: cannot read tokenFile ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return checkedToken(text, `${what}: tokenFile ${file}`);
}

/** A token as given (ASCII whitespace around it dropped), or an error naming where it came from. */
export function checkedToken(text: string, what: string): string {
  const token = text.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  const problem = agentTokenProblem(token);
  if (problem) throw new HostsConfigError(`${what}: ${problem}`);
  return token;
}

/** Parse the agents file's text; `file` only names it in errors, `baseDir` resolves relative token files. */
export function parseAgentsFile(text: string, file: string, baseDir = path.dirname(file)): HostConfig[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HostsConfigError(`GPUDECK_AGENTS_FILE ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(json))
    throw new HostsConfigError(
      `GPUDECK_AGENTS_FILE ${file} must hold a JSON list of agents, e.g. [{"name": "gpu-a", "url": "http://10.0.0.5:9300", "tokenFile": "/etc/gpudeck/gpu-a.token"}]`,
    );
  const hosts: HostConfig[] = [];
  const seen = new Set<string>();
  json.forEach((raw: unknown, i: number) => {
    const label = typeof (raw as { name?: unknown })?.name === "string" ? `entry ${i + 1} ("${(raw as { name: string }).name}")` : `entry ${i + 1}`;
    const what = `GPUDECK_AGENTS_FILE ${file}, ${label}`;
    const parsed = entrySchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const key = issue.path.length ? issue.path.join(".") : issue.code === "unrecognized_keys" ? (issue as { keys?: string[] }).keys?.join(", ") : null;
      throw new HostsConfigError(`${what}: ${key ? `key "${key}": ` : ""}${issue.message}`);
    }
    const entry = parsed.data;
    const nameProblem = hostNameProblem(entry.name);
    if (nameProblem) throw new HostsConfigError(`${what}: key "name": ${nameProblem}`);
    if (seen.has(entry.name)) throw new HostsConfigError(`${what}: key "name": "${entry.name}" is used by an earlier entry; names must be unique`);
    seen.add(entry.name);
    if (entry.token !== undefined && entry.tokenFile !== undefined) throw new HostsConfigError(`${what}: give "token" or "tokenFile", not both`);
    if (entry.token === undefined && entry.tokenFile === undefined)
      throw new HostsConfigError(`${what}: key "tokenFile" (or "token") is missing: each agent needs its bearer token`);
    const tokenFile = entry.tokenFile === undefined ? null : path.resolve(/*turbopackIgnore: true*/ baseDir, entry.tokenFile);
    const token = tokenFile ? readToken(tokenFile, what) : checkedToken(entry.token!, `${what}: key "token"`);
    const insecure = plainHttpProblem(entry.url, entry.insecureHttp);
    if (insecure) throw new HostsConfigError(`${what}: ${insecure}`);
    hosts.push({
      name: entry.name,
      url: entry.url.replace(/\/+$/, ""),
      token,
      tokenSource: tokenFile ?? `the "token" of ${label} in ${file}`,
      source: "file",
      tls: agentTlsFrom(entry.url, entry.caFile, entry.fingerprint, what, baseDir),
      insecureHttp: entry.insecureHttp === true,
    });
  });
  return hosts;
}

/** The hosts the environment names (see the file comment). */
export function loadHostsFromEnv(env: Readonly<Record<string, string | undefined>>, dataDir: string): HostConfig[] {
  const file = env.GPUDECK_AGENTS_FILE?.trim();
  // the config file's [[hosts]] (server/config/hosts.ts) arrive as the same list in JSON text
  const inline = env.GPUDECK_AGENTS_JSON?.trim();
  if (inline) {
    if (file || env.GPUDECK_AGENT_URL?.trim())
      throw new HostsConfigError("set one of GPUDECK_AGENTS_JSON (the config file's [[hosts]]), GPUDECK_AGENTS_FILE and GPUDECK_AGENT_URL");
    return parseAgentsFile(inline, "(GPUDECK_AGENTS_JSON: the config file's [[hosts]])", "/");
  }
  if (file) {
    if (env.GPUDECK_AGENT_URL?.trim()) throw new HostsConfigError("set GPUDECK_AGENTS_FILE or GPUDECK_AGENT_URL, not both (list every agent in the file)");
    let text: string;
    try {
      text = readFileSync(/*turbopackIgnore: true*/ file, "utf8");
    } catch (err) {
      throw new HostsConfigError(`cannot read GPUDECK_AGENTS_FILE ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return parseAgentsFile(text, file);
  }
  const url = (env.GPUDECK_AGENT_URL?.trim() || "http://127.0.0.1:9300").replace(/\/+$/, "");
  const checked = agentUrlSchema.safeParse(url);
  if (!checked.success) throw new HostsConfigError(`GPUDECK_AGENT_URL: ${checked.error.issues[0]!.message}`);
  const insecureHttp = /^(1|true|yes)$/i.test(env.GPUDECK_AGENT_INSECURE_HTTP?.trim() ?? "");
  const insecure = plainHttpProblem(url, insecureHttp);
  if (insecure) throw new HostsConfigError(`GPUDECK_AGENT_URL: ${insecure}`);
  let token: string | null = null;
  let tokenSource = "GPUDECK_AGENT_TOKEN";
  if (env.GPUDECK_AGENT_TOKEN !== undefined) {
    const unset = env.GPUDECK_AGENT_TOKEN.trim() === "" ? " (it is set but empty: unset it to use <data dir>/agent-token)" : "";
    try {
      token = checkedToken(env.GPUDECK_AGENT_TOKEN, "GPUDECK_AGENT_TOKEN");
    } catch (err) {
      throw new HostsConfigError(`${(err as Error).message}${unset}`);
    }
  } else {
    tokenSource = path.join(/*turbopackIgnore: true*/ dataDir, "agent-token");
    let text: string | null = null;
    try {
      text = readFileSync(/*turbopackIgnore: true*/ tokenSource, "utf8");
    } catch {
      text = null; // no local agent's token (yet): the agent will say 401, naming this file
    }
    if (text !== null) token = checkedToken(text, `the agent token file ${tokenSource}`);
  }
  const given = env.GPUDECK_AGENT_NAME?.trim();
  if (given) {
    const problem = hostNameProblem(given);
    if (problem) throw new HostsConfigError(`GPUDECK_AGENT_NAME: ${problem}`);
  }
  const agentHost = new URL(url).hostname;
  const loopback = agentHost === "localhost" || agentHost.startsWith("127.") || agentHost === "[::1]";
  const name = given || hostNameFrom(loopback ? osHostname() : agentHost);
  const tls = agentTlsFrom(
    url,
    env.GPUDECK_AGENT_CA_FILE?.trim() || undefined,
    env.GPUDECK_AGENT_FINGERPRINT?.trim() || undefined,
    "GPUDECK_AGENT_CA_FILE/GPUDECK_AGENT_FINGERPRINT",
  );
  return [{ name, url, token, tokenSource, source: "env", tls, insecureHttp }];
}
