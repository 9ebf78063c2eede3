/**
 * The package carries the exact dependency tree this repository tests (package-lock.json, as
 * npm-shrinkwrap.json, which npm honours for a global install): without it, `npm install -g`
 * resolves afresh and ignores this package's "overrides", e.g. usocket's node-gyp 7, which no
 * longer builds on Node 20. `prepack` writes it, `postpack` removes it again.
 *
 *   node bin/shrinkwrap.js write | remove
 */
import { copyFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const target = path.join(root, "npm-shrinkwrap.json");

const command = process.argv[2];
if (command === "write") copyFileSync(path.join(root, "package-lock.json"), target);
else if (command === "remove") rmSync(target, { force: true });
else {
  process.stderr.write("usage: node bin/shrinkwrap.js write|remove\n");
  process.exit(2);
}
