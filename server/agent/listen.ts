/**
 * The agent's HTTP server: plain HTTP on loopback (the default, a panel on the same machine), or
 * TLS for agents a panel reaches over the network (GPUDECK_AGENT_TLS_CERT + GPUDECK_AGENT_TLS_KEY,
 * PEM files; the panel verifies with a CA file or pins the certificate's SHA-256 fingerprint).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { ConfigError, type AgentTlsFiles } from "./config";

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/i;

/** A listen address reachable only from this machine. */
export function isLoopbackListen(host: string): boolean {
  return LOOPBACK.test(host.replace(/^\[|\]$/g, ""));
}

/**
 * Why the agent must not start as configured, or null: plain HTTP off loopback carries the bearer
 * token and every action in clear, so it needs TLS or the owner's explicit GPUDECK_AGENT_INSECURE_HTTP=1.
 */
export function plainHttpRefusal(config: { host: string; port: number; tls?: AgentTlsFiles | null; insecureHttp?: boolean }): string | null {
  if (config.tls || config.insecureHttp || isLoopbackListen(config.host)) return null;
  return (
    `the agent would serve plain HTTP on ${config.host}:${config.port}, off loopback: its bearer token and every action would travel in clear. ` +
    `Serve https (agent.tls_cert and agent.tls_key, GPUDECK_AGENT_TLS_CERT/KEY) and give the panel an https:// URL, ` +
    `or, on a network you trust, set GPUDECK_AGENT_INSECURE_HTTP=1 here and insecure_http = true on the panel's host entry`
  );
}

export function createAgentServer(tls: AgentTlsFiles | null | undefined, handler: http.RequestListener): http.Server {
  if (!tls) return http.createServer(handler);
  const cert = readPem(tls.certFile, "GPUDECK_AGENT_TLS_CERT");
  const key = readPem(tls.keyFile, "GPUDECK_AGENT_TLS_KEY");
  try {
    return https.createServer({ cert, key, minVersion: "TLSv1.2" }, handler) as unknown as http.Server;
  } catch (err) {
    throw new ConfigError(`GPUDECK_AGENT_TLS_CERT/KEY: ${(err as Error).message}`);
  }
}
