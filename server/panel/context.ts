/** Who is calling the panel. Demo mode acts as a demo admin; otherwise a session is needed. */
import type { Context } from "../trpc";
import type { Panel } from "./instance";

export async function createPanelContext(req: Request, panel: Panel): Promise<Context> {
  const sourceAddr = req.headers.get("x-forwarded-for")?.split(",")[0]?.trim() || undefined;
  if (panel.config.demo) {
    return { actor: { user: "demo", role: "admin", unitPatterns: [], sourceAddr }, sourceAddr };
  }
  // Authentication outside demo mode: sessions (server/auth) are wired here.
  return { actor: null, sourceAddr };
}
