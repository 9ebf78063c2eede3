/** This agent's version (package.json), reported in `host.status` and in every snapshot. */
import { readFileSync } from "node:fs";

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

export const AGENT_VERSION = readVersion();
