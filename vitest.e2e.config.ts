import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

/**
 * Tests against real systemd (namespace sandboxes, root only) and other slow end-to-end checks.
 * One file at a time: sandboxes share the machine's network namespace and CPUs, and each
 * file's timings (start-pre durations, timeouts) assume it is not competing with another.
 * Forks, not threads: the sandbox's processes die with the process that started them
 * (PR_SET_PDEATHSIG follows the spawning thread).
 */
export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL("./", import.meta.url)) } },
  test: {
    include: ["e2e/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
