import { getPanel } from "@/server/panel/instance";

export const dynamic = "force-dynamic";

/** The filtered audit log as CSV (operators and admins): see server/panel/auditCsv.ts. */
export async function GET(req: Request): Promise<Response> {
  return (await getPanel()).handleAuditCsv(req);
}
