import { describe, expect, it } from "vitest";
import { lastLines, unhandledErrorsOf } from "./testReport";

// what vitest 3 prints when an error escapes every test (colours included)
const VITEST_UNHANDLED = [
  " Test Files  230 passed (230)",
  "",
  "\u001b[31m⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯ Unhandled Rejection ⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯\u001b[39m",
  "Error: connect ECONNREFUSED 127.0.0.1:41065",
  " ❯ TCPConnectWrap.afterConnect [as oncomplete] node:net:1555:16",
  'This error originated in "server/panel/fleet/fleet.test.ts" test file.',
].join("\n");

describe("the test digest", () => {
  it("quotes vitest's unhandled errors, without colours, from their heading on", () => {
    const quoted = unhandledErrorsOf(VITEST_UNHANDLED)!;
    expect(quoted).toContain("Unhandled Rejection");
    expect(quoted).toContain("ECONNREFUSED");
    expect(quoted).toContain("fleet.test.ts");
    expect(quoted).not.toContain("Test Files");
    expect(quoted).not.toContain("\u001b");
  });

  it("finds nothing in a run without them", () => {
    expect(unhandledErrorsOf(" Test Files  230 passed (230)\n Tests  2122 passed")).toBeNull();
  });

  it("keeps the last fifteen lines that say something", () => {
    const text = Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join("\n");
    const kept = lastLines(text).split("\n");
    expect(kept).toHaveLength(15);
    expect(kept[14]!.trim()).toBe("line 39");
  });
});
