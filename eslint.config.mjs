import nextVitals from "eslint-config-next/core-web-vitals";
import nextTs from "eslint-config-next/typescript";

const config = [
  ...nextVitals,
  ...nextTs,
  {
    ignores: [".next/**", ".next-*/**", ".data/**", "node_modules/**", "test-results/**", "playwright-report/**", "next-env.d.ts", "e2e/fakes/nvidia-smi"],
  },
  {
    rules: {
      // Shell strings are how peers got command injection CVEs: argv arrays only.
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "child_process", importNames: ["exec", "execSync"], message: "Use execFile/spawn with an argv array." },
            { name: "node:child_process", importNames: ["exec", "execSync"], message: "Use execFile/spawn with an argv array." },
          ],
        },
      ],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
];
export default config;
