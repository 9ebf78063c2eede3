import { expect, it } from "vitest";
import nextConfig from "../../next.config";
import { SECURITY_HEADERS } from "./securityHeaders";

it("the API's security headers are the ones Next sends with everything else", async () => {
  const rules = await nextConfig.headers!();
  expect(rules).toEqual([{ source: "/:path*", headers: [...SECURITY_HEADERS] }]);
});
