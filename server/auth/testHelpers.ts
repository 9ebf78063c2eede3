/** Test-only helpers (temp data dirs, a hand-driven clock). Not part of the public API. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function tempDataDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "gpudeck-auth-"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export class FakeClock {
  constructor(public now = Date.UTC(2025, 0, 15, 12, 0, 0)) {}
  readonly clock = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
