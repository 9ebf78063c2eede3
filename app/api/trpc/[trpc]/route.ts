import { getPanel } from "@/server/panel/instance";

export const dynamic = "force-dynamic";

/** Guard, bounded body, tRPC: see server/panel/handler.ts (the hostile-input tests call the same). */
async function handler(req: Request): Promise<Response> {
  return (await getPanel()).handle(req);
}

export { handler as GET, handler as POST };
