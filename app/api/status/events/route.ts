import { getPanel } from "@/server/panel/instance";
import { handleStatusEvents } from "@/server/statusPage/http";

export const dynamic = "force-dynamic";

/** The status page, live (SSE) while it is open, with the page's own access rules (server/statusPage/http.ts). */
export async function GET(req: Request): Promise<Response> {
  return handleStatusEvents(req, (await getPanel()).statusHttp);
}
