import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL("./", import.meta.url)) } },
  test: {
    include: ["server/**/*.test.ts", "components/**/*.test.ts", "components/**/*.test.tsx", "app/**/*.test.ts", "scripts/**/*.test.ts", "bench/**/*.test.ts"],
    environment: "node",
    testTimeout: 15000,
    // two workers, not one per core: on CI's 2 cores, with the suites' own servers and child
    // processes, more workers only contend (measured: 344 s with the default, 262 s with 2)
    maxWorkers: 2,
  },
});
