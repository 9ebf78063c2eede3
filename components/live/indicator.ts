/**
 * What the header's connection indicator says. "live" means the picture is live: on a host's or
 * a unit's page that needs the browser's stream to the panel AND the panel's stream to that
 * host's agent; a host that is down or still connecting says so instead. On the fleet overview
 * a host that is down is a problem worth a glance, while the page itself stays live.
 */
import type { LiveStore } from "./store";

export type IndicatorState = "connecting" | "live" | "reconnecting" | "stale" | "host-down" | "host-connecting";

export interface Indicator {
  state: IndicatorState;
  /** what it says: the state, or for a watched host in trouble that host's state (its name is `host`) */
  text: string;
  /** the watched host's name (host and unit pages) */
  host: string | null;
  /** backend problems (systemd, GPU telemetry) of the watched host, or the hosts that are down */
  problems: string[];
}

export function indicatorOf(store: Pick<LiveStore, "scope" | "connection" | "host" | "summaries">): Indicator | null {
  const scope = store.scope;
  if (!scope || store.connection === "off") return null;
  if (scope.watch === "fleet") {
    const down = store.summaries().filter((s) => s.state === "down");
    return { state: store.connection, text: store.connection, host: null, problems: down.map((s) => `${s.name} down`) };
  }
  const h = store.host(scope.host);
  const problems = [
    h?.systemd && h.systemd.state !== "ok" ? `systemd ${h.systemd.state}: ${h.systemd.message}` : null,
    h?.telemetry && h.telemetry.state !== "ok" ? `GPU telemetry ${h.telemetry.state}: ${h.telemetry.message}` : null,
  ].filter((p): p is string => p !== null);
  const hostState = h?.summary?.state;
  if (store.connection === "live" && hostState && hostState !== "connected") {
    return { state: `host-${hostState}`, text: hostState, host: scope.host, problems };
  }
  return { state: store.connection, text: store.connection, host: scope.host, problems };
}
