/** What the users page says about a user, and how it reads what the admin typed. */
import type { PanelUser } from "@/server/contract/users";

/** "vllm-a-*, vllm-b-*" → ["vllm-a-*", "vllm-b-*"] (unit names hold neither commas nor spaces). */
export function parsePatterns(text: string): string[] {
  return text.split(/[\s,]+/).filter((p) => p.length > 0);
}

/** User names are matched without case, as the server does. */
export function isSameUser(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/**
 * Which units the user may act on: admins all, viewers none; an operator those matching their
 * patterns, and nothing at all without one (worth a warning).
 */
export function unitScope(u: Pick<PanelUser, "role" | "unitPatterns">): { kind: "all" | "none" | "unset" | "patterns"; text: string } {
  if (u.role === "admin") return { kind: "all", text: "all units" };
  if (u.role === "viewer") return { kind: "none", text: "none (viewer)" };
  if (u.unitPatterns.length === 0) return { kind: "unset", text: "none yet: may act on no unit" };
  return { kind: "patterns", text: u.unitPatterns.join(", ") };
}

/** The confirmation after an edit: the role, and for an operator the units it covers. */
export function savedMessage(u: Pick<PanelUser, "name" | "role" | "unitPatterns">): string {
  return `Saved ${u.name}: ${u.role}${u.role === "operator" ? ` for ${u.unitPatterns.join(", ") || "no units"}` : ""}.`;
}

export function formatTime(ms: number | null): string {
  return ms === null ? "—" : new Date(ms).toLocaleString();
}
