import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { getPanel } from "@/server/panel/instance";
import { guardRequest } from "@/server/panel/requestGuard";
import { createPanelContext } from "@/server/panel/context";

export const dynamic = "force-dynamic";

async function handler(req: Request): Promise<Response> {
  const panel = getPanel();
  const guard = guardRequest(req, panel.config.allowedOrigins);
  if (!guard.ok) {
    return Response.json({ error: { message: guard.message } }, { status: guard.status });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: panel.router,
    createContext: () => createPanelContext(req, panel),
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR") console.error(`[panel] ${path ?? "?"}: ${error.message}`);
    },
  });
}

export { handler as GET, handler as POST };
