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
