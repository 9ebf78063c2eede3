import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL("./", import.meta.url)) } },
  test: {
    include: ["server/**/*.test.ts", "components/**/*.test.ts", "components/**/*.test.tsx", "app/**/*.test.ts"],
    environment: "node",
    testTimeout: 15000,
  },
});
