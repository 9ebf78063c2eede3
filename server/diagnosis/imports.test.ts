/**
 * The diagnosis engine is pure and stands alone: its source imports only its own files and the
 * wire contract (server/contract), never the agent or the panel, so either can run it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const HERE = dirname(fileURLToPath(import.meta.url));
const SERVER = resolve(HERE, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") ? [path] : [];
  });
}

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^"';]*?from\s+"([^"]+)"|(?:^|\n)\s*import\s+"([^"]+)"/g;

describe("server/diagnosis imports", () => {
  const files = sourceFiles(HERE);

  it("finds the engine's files", () => {
    expect(files.map((f) => relative(HERE, f))).toEqual(expect.arrayContaining(["diagnose.ts", "registry.ts", "context.ts", join("cases", "failed.ts")]));
  });

  it("imports only its own files and server/contract", () => {
    const outside: string[] = [];
    for (const file of files) {
      for (const m of readFileSync(file, "utf8").matchAll(IMPORT_RE)) {
        const spec = m[1] ?? m[2];
        const target = spec.startsWith(".") ? relative(SERVER, resolve(dirname(file), spec)) : spec;
        if (!target.startsWith("diagnosis/") && !target.startsWith("contract/")) outside.push(`${relative(HERE, file)} → ${spec}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
