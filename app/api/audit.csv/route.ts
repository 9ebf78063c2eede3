import { getPanel } from "@/server/panel/instance";

export const dynamic = "force-dynamic";

/** The filtered audit log as CSV (operators and admins): see server/panel/auditCsv.ts. */
export function GET(req: Request): Response {
  return getPanel().handleAuditCsv(req);
}
