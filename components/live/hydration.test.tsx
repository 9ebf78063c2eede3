// @vitest-environment happy-dom
/**
 * A relative time ("for 42 min 17 s") rendered by the server and hydrated a moment later by the
 * browser: the two clocks differ, and React threw #418 on the fleet overview. useNow() gives both
 * the same placeholder, and the real time right after hydration.
 */
import { act } from "react";
import { hydrateRoot } from "react-dom/client";
import { renderToString } from "react-dom/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { formatDuration } from "@/server/contract/format";
import { useHydrated, useNow } from "./LiveProvider";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const STARTED = Date.UTC(2026, 11, 3, 8, 0, 0);
/** the mistake this guards against: reading the wall clock while rendering */
const wallClock = () => Date.now();

function ForHowLong() {
  const now = useNow();
  const hydrated = useHydrated();
  return <span data-hydrated={hydrated}>for {formatDuration(now - STARTED)}</span>;
}

afterEach(() => {
  vi.useRealTimers();
  document.body.innerHTML = "";
});

describe("useNow across server render and hydration", () => {
  it("renders the same placeholder on the server and while hydrating, the real time after", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setInterval", "clearInterval"] });
    vi.setSystemTime(STARTED + 42 * 60_000 + 17_000);
    const html = renderToString(<ForHowLong />);
    expect(html).toContain("—");
    expect(html).not.toContain("42 min");

    // the browser hydrates 3 s later, on its own clock
    vi.setSystemTime(STARTED + 42 * 60_000 + 20_000);
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const errors: unknown[] = [];
    await act(async () => {
      hydrateRoot(container, <ForHowLong />, { onRecoverableError: (e) => errors.push(e) });
    });
    expect(errors).toEqual([]);
    expect(container.textContent).toBe("for 42 min 20 s");
    expect(container.querySelector("span")?.dataset.hydrated).toBe("true");

    await act(async () => {
      vi.advanceTimersByTime(1000);
    });
    expect(container.textContent).toBe("for 42 min 21 s");
  });

  it("a relative time from Date.now() in render would not have matched (the test can fail)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(STARTED + 1000);
    const Naive = () => <span>for {formatDuration(wallClock() - STARTED)}</span>;
    const html = renderToString(<Naive />);
    vi.setSystemTime(STARTED + 5000);
    const container = document.createElement("div");
    container.innerHTML = html;
    document.body.append(container);
    const errors: unknown[] = [];
    await act(async () => {
      hydrateRoot(container, <Naive />, { onRecoverableError: (e) => errors.push(e) });
    });
    expect(errors.length).toBeGreaterThan(0);
  });
});
