import { getPanel } from "@/server/panel/instance";

export const dynamic = "force-dynamic";

/** Single sign-on: /api/auth/oidc/login and /api/auth/oidc/callback (server/panel/oidcRoutes.ts). */
export async function GET(req: Request): Promise<Response> {
  return (await getPanel()).handleOidc(req);
}
