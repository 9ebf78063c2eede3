import { getPanel } from "@/server/panel/instance";
import { handleStatusPage } from "@/server/statusPage/http";

export const dynamic = "force-dynamic";

/** The stakeholders' status page, no session needed: `/status` (public) or `/status?token=…` (see server/statusPage/http.ts). */
export async function GET(req: Request): Promise<Response> {
  return handleStatusPage(req, (await getPanel()).statusHttp);
}

export { GET as HEAD };
