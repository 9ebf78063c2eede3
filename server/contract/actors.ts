/**
 * Who acts: the three roles and the actor the panel forwards to the agent with every call.
 * Part of the contract: imports nothing else of the project.
 */

export type Role = "viewer" | "operator" | "admin";
export const ROLES: readonly Role[] = ["viewer", "operator", "admin"];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

export interface Actor {
  user: string;
  role: Role;
  /** For operators: unit globs they may act on. */
  unitPatterns: string[];
  sourceAddr?: string;
}
