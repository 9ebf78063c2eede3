/**
 * What a page watches live, from its path: the fleet overview and the Hosts page the fleet, a
 * host's pages that host, a unit page that unit. Pages that show nothing live (sign-in, the
 * redirects of old links, users, audit, account) open no stream. One stream per tab, so a
 * page never gets every host's GPU samples it does not show.
 */
import type { WatchScope } from "@/server/contract/fleet";

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

export function scopeForPath(pathname: string): WatchScope | null {
  const parts = pathname.split("/").filter(Boolean);
  if (parts.length === 0) return { watch: "fleet" };
  if (parts[0] !== "hosts") return null;
  if (parts.length === 1) return { watch: "fleet" };
  const host = decode(parts[1]!);
  if (!host) return null;
  if (parts.length === 2 || (parts.length === 3 && parts[2] === "gpus")) return { watch: "host", host };
  if (parts.length === 4 && parts[2] === "units") {
    const name = decode(parts[3]!);
    return name ? { watch: "unit", host, name } : null;
  }
  return null;
}

/** Equal for equal scopes: the stream (and its store) is replaced only when this changes. */
export function scopeKey(scope: WatchScope | null): string {
  if (!scope) return "";
  if (scope.watch === "fleet") return "fleet";
  return scope.watch === "host" ? `host\n${scope.host}` : `unit\n${scope.host}\n${scope.name}`;
}
