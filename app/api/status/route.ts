import { getPanel } from "@/server/panel/instance";
import { handleStatusJson } from "@/server/statusPage/http";

export const dynamic = "force-dynamic";

/** The status page's data as JSON (`StatusDocument`), with the page's own access rules (server/statusPage/http.ts). */
export async function GET(req: Request): Promise<Response> {
  return handleStatusJson(req, (await getPanel()).statusHttp);
}
