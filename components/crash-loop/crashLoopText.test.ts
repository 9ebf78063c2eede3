import { describe, expect, it } from "vitest";
import type { CrashLoopMarker } from "@/server/contract/faults";
import { crashLoopEndless, crashLoopText } from "./crashLoopText";

const marker = (startLimitStops: boolean | null): CrashLoopMarker => ({
  restarts: 7,
  windowMs: 600_000,
  rule: "5/10m",
  firstAtUsec: 1,
  lastAtUsec: 2,
  startLimitStops,
});

describe("crashLoopText", () => {
  it("says how many restarts in the rule's window", () => {
    expect(crashLoopText(marker(true))).toBe("crash loop: 7 restarts in 10 min");
    expect(crashLoopText({ ...marker(true), restarts: 1, windowMs: 90_000 })).toBe("crash loop: 1 restart in 1 min 30 s");
  });

  it("says so when systemd's start limit can never end it; unknown settings are not called endless", () => {
    expect(crashLoopText(marker(false))).toBe("crash loop: 7 restarts in 10 min — systemd will never stop it");
    expect(crashLoopEndless(marker(false))).toBe(true);
    expect(crashLoopEndless(marker(null))).toBe(false);
  });
});
