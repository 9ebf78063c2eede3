/** `setup.complete`: first run — the token from the setup link creates the first admin, who is then signed in. */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { AuthError } from "../../auth/types";
import { router } from "../../trpc";
import { panelProcedure } from "../trpc";
import { publicUser } from "./sessionRouter";

export const setupRouter = router({
  complete: panelProcedure
    .input(z.object({ token: z.string().max(200), username: z.string().max(256), password: z.string().max(2048) }).strict())
    .mutation(async ({ input, ctx }) => {
      const { panelRequest: req, services } = ctx;
      if (services.demo) throw new TRPCError({ code: "BAD_REQUEST", message: "Demo mode needs no setup." });
      try {
        const result = await services.auth.completeSetup({ ...input, secure: req.secure, sourceAddr: req.sourceAddr, userAgent: req.userAgent });
        req.resHeaders.append("Set-Cookie", result.setCookie);
        return { user: publicUser(result.user, "session") };
      } catch (err) {
        if (err instanceof AuthError) {
          throw new TRPCError({ code: err.code === "invalid-setup-token" || err.code === "admin-exists" ? "FORBIDDEN" : "BAD_REQUEST", message: err.message });
        }
        throw err;
      }
    }),
});
