/**
 * How input errors read: zod's issues as one sentence ("name: unit name is empty; reason: …"),
 * the same in the API's error message and in the audit log. Part of the contract: imports
 * nothing else of the project.
 */
import type { ZodError } from "zod";

export function zodIssuesMessage(error: ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ` : "") + i.message).join("; ");
}
