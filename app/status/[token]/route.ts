import { getPanel } from "@/server/panel/instance";
import { handleStatusPage } from "@/server/statusPage/http";

export const dynamic = "force-dynamic";

/** `/status/<token>`: the status page's link with its token in the path (see server/statusPage/http.ts). */
export async function GET(req: Request, { params }: { params: Promise<{ token: string }> }): Promise<Response> {
  const { token } = await params;
  return handleStatusPage(req, (await getPanel()).statusHttp, token);
}

export { GET as HEAD };
