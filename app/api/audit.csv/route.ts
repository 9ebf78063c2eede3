import { handleAuditCsvRequest } from "@/server/panel/handler";
import { getPanel } from "@/server/panel/instance";

export const dynamic = "force-dynamic";

/** The filtered audit log as CSV (operators and admins): see handleAuditCsvRequest. */
export function GET(req: Request): Response {
  return handleAuditCsvRequest(req, getPanel());
}
