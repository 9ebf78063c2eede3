import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

// Shell strings are how peers got command injection CVEs: argv arrays only.
const noShellStrings = [
  { name: "child_process", importNames: ["exec", "execSync"], message: "Use execFile/spawn with an argv array." },
  { name: "node:child_process", importNames: ["exec", "execSync"], message: "Use execFile/spawn with an argv array." },
];

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: [".next/**", ".next-*/**", ".data/**", "node_modules/**", "test-results/**", "playwright-report/**", "next-env.d.ts", "e2e/fakes/nvidia-smi"],
  },
  {
    rules: {
      "no-restricted-imports": ["error", { paths: noShellStrings }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    // The wire contract is the one thing agent, panel and UI all import: it imports nothing of
    // the project back (only its own files and libraries such as zod).
    files: ["server/contract/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: noShellStrings,
          patterns: [{ group: ["../*", "@/*", "**/server/*"], message: "server/contract imports nothing else of the project (see ARCHITECTURE.md)." }],
        },
      ],
    },
  },
];
export default config;
