/**
 * From the panel: can it reach each configured agent, and does the agent accept its token?
 * /healthz answers anyone (is it there, and how is it); /metrics needs the token (is it the right
 * one). A token is never printed: messages say where it came from.
 */
import type { CheckResult, HttpGet } from "../types";

export interface AgentTarget {
  name: string;
  url: string;
  token: string | null;
  /** where the token came from (a file, a variable), never the token */
  tokenSource: string;
}

const TIMEOUT_MS = 5000;

function transportReason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError" || e.name === "AbortError") return `no answer within ${TIMEOUT_MS / 1000} s`;
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

export async function checkAgent(get: HttpGet, agent: AgentTarget): Promise<CheckResult> {
  const id = `agent ${agent.name}`;
  let health: { systemd?: string; telemetry?: string };
  try {
    const res = await get(`${agent.url}/healthz`, {}, TIMEOUT_MS);
    if (res.status !== 200) {
      return { id, status: "error", detail: `${agent.url}/healthz answered HTTP ${res.status}: is that a gpudeck agent?`, fix: "check the host's url" };
    }
    health = JSON.parse(res.text) as typeof health;
  } catch (err) {
    const reason = transportReason(err);
    return {
      id,
      status: "error",
      detail: `cannot reach ${agent.url}: ${reason}`,
      fix:
        reason === "ECONNREFUSED"
          ? "is the agent running there (systemctl status gpudeck-agent)? Its agent.listen must be an address this machine can reach"
          : "check the URL, DNS, firewalls between the two machines, and (for https) the agent's certificate",
    };
  }
  if (agent.token === null) {
    return {
      id,
      status: "error",
      detail: `reachable, but the panel has no token for it (looked in ${agent.tokenSource})`,
      fix: "give the host a token (token_file or token_env in [[hosts]])",
    };
  }
  let status: number;
  try {
    status = (await get(`${agent.url}/metrics`, { Authorization: `Bearer ${agent.token}` }, TIMEOUT_MS)).status;
  } catch (err) {
    return { id, status: "error", detail: `reachable at /healthz, but /metrics failed: ${transportReason(err)}` };
  }
  if (status === 401) {
    return {
      id,
      status: "error",
      detail: `${agent.url} refuses the token from ${agent.tokenSource}`,
      fix: "give the panel the agent's own token (the agent's GPUDECK_AGENT_TOKEN, token file, or <agent data dir>/agent-token)",
    };
  }
  if (status !== 200) return { id, status: "error", detail: `${agent.url}/metrics answered HTTP ${status}` };
  const states = `systemd ${health.systemd ?? "?"}, GPU telemetry ${health.telemetry ?? "?"}`;
  const degraded = health.systemd !== "ok" || health.telemetry !== "ok";
  return degraded
    ? { id, status: "warn", detail: `reachable and the token is accepted, but ${states}`, fix: "run gpudeck doctor --agent on that host" }
    : { id, status: "ok", detail: `reachable, token accepted; ${states}` };
}
