import { describe, expect, it } from "vitest";
import { renderToString } from "react-dom/server";
import type { UnitTransition } from "@/server/contract/types";
import { StateTimeline, type ActionMarker } from "./StateTimeline";

const NOW = Date.UTC(2025, 0, 12, 12, 0, 0);
const at = (secAgo: number) => (NOW - secAgo * 1000) * 1000; // µs
function tr(secAgo: number, to: [string, string], from: [string, string] | null, extra: Partial<UnitTransition> = {}): UnitTransition {
  return {
    unit: "vllm.service",
    atUsec: at(secAgo),
    from: from && { activeState: from[0], subState: from[1] },
    to: { activeState: to[0], subState: to[1] },
    result: "success",
    mainPid: 0,
    controlPid: 0,
    nRestarts: 0,
    inRestartCycle: false,
    ...extra,
  };
}

const transitions = [
  tr(3000, ["active", "running"], ["inactive", "dead"]),
  tr(400, ["deactivating", "stop-sigterm"], ["active", "running"]),
  tr(398, ["inactive", "dead"], ["deactivating", "stop-sigterm"]),
  tr(397, ["activating", "start-pre"], ["inactive", "dead"], { controlPid: 213509 }),
  tr(100, ["activating", "start"], ["activating", "start-pre"]),
  tr(90, ["active", "running"], ["activating", "start"], { mainPid: 4242 }),
];
const markers: ActionMarker[] = [
  { atMs: NOW - 401_000, user: "alice", action: "restart", reason: "GPU memory leak", jobResult: "done", auditId: 7, href: "/audit?id=7" },
  { atMs: NOW - 10 * 3_600_000, user: "bob", action: "stop" }, // outside the 1 h window
];

function render(extra: Partial<Parameters<typeof StateTimeline>[0]> = {}) {
  return renderToString(
    <StateTimeline
      transitions={transitions}
      markers={markers}
      range="1h"
      onRangeChange={() => {}}
      nowMs={NOW}
      unitName="vllm.service"
      timeZone="UTC"
      initialWidth={800}
      {...extra}
    />,
  );
}

describe("StateTimeline (server render)", () => {
  it("draws one focusable item per state in view with an exact label", () => {
    const html = render();
    const items = html.match(/data-seg="\d+"/g) ?? [];
    // inactive before the first transition (its start unknown), then the six transitions, of
    // which stop-sigterm (2 s) and inactive (1 s) are under 3 px at 1 h and drawn as one cluster
    expect(items).toHaveLength(6);
    expect(html).toContain('aria-label="2 state changes from 11:53:20 to 11:53:23: deactivating (stop-sigterm) 1×, inactive (dead) 1×. Zoom in to see them."');
    expect(html).toContain('aria-label="activating (start-pre) from 11:53:23 to 11:58:20, 4 min 57 s"');
    // the current state is the single tab stop among segments
    expect(html.match(/tabindex="0" data-seg/g) ?? []).toHaveLength(1);
    expect(html).toMatch(/aria-label="active \(running\) from 11:58:30 to now, so far 1 min 30 s"[^>]*tabindex="0"/);
  });

  it("fills states with their colour variable and pattern", () => {
    const html = render();
    expect(html).toContain("fill:var(--gd-state-start-pre)");
    expect(html).toMatch(/fill="url\(#gdtl[\w-]*-diagonal\)"/);
    expect(html).toContain("fill:var(--gd-state-running)");
  });

  it("shows markers in the window only, with who, what and why", () => {
    const html = render();
    expect(html.match(/data-marker="\d+"/g) ?? []).toHaveLength(1);
    expect(html).toContain('aria-label="restart by alice at 11:53:19, reason: GPU memory leak, job result: done"');
    expect(html).not.toContain("bob");
  });

  it("summarises for screen readers and lists segments in a hidden table", () => {
    const html = render();
    expect(html).toMatch(/aria-label="State timeline of vllm.service, 11:00 to now, following now\. Now active \(running\) for 1 min 30 s\./);
    expect(html).toContain("<caption>State timeline of vllm.service, 11:00 to now</caption>");
    expect(html).toContain("<td>activating (start-pre)</td><td>11:53:23</td><td>11:58:20</td><td>4 min 57 s</td>");
    expect(html).toContain("<td>2 state changes: deactivating (stop-sigterm) 1×, inactive (dead) 1×</td>");
    expect(html).toContain('<a href="/audit?id=7">restart</a>');
  });

  it("marks the selected range and live mode on the buttons", () => {
    const html = render({ range: "6h" });
    expect(html).toMatch(/aria-pressed="true"[^>]*>6 h</);
    expect(html).toMatch(/aria-pressed="false"[^>]*>1 h</);
    expect(html).toMatch(/aria-pressed="true"[^>]*>.*Live/);
  });

  it("renders only the frame before the width is known, with no times that could differ by time zone", () => {
    const html = render({ initialWidth: undefined });
    expect(html).not.toContain("data-seg=");
    expect(html).not.toContain("<table");
    expect(html).not.toMatch(/\d\d:\d\d/);
    expect(html).toContain(">Live<");
  });

  it("puts labels inside segments wide enough for them", () => {
    // 1 h over 744 px: start-pre (~5 min ≈ 61 px) is too narrow for any label, running is wide
    const hour = render();
    expect(hour).not.toMatch(/<text[^>]*>(activating \(start-pre\)|start-pre)<\/text>/);
    expect(hour).toMatch(/<text[^>]*>active \(running\)<\/text>/);
    // 15 min: start-pre ≈ 245 px carries its full label; the 10 s start step (8 px) none
    const quarter = render({ range: "15m" });
    expect(quarter).toMatch(/<text[^>]*>activating \(start-pre\)<\/text>/);
    expect(quarter).not.toMatch(/<text[^>]*>(activating \(start\)|start)<\/text>/);
  });

  it("stays small and quick for a unit in a restart loop (10 000 transitions in 24 h)", () => {
    const loop: [string, string][] = [
      ["activating", "start-pre"],
      ["active", "running"],
      ["failed", "failed"],
      ["activating", "auto-restart"],
    ];
    const many = Array.from({ length: 10_000 }, (_, i) => tr(86_000 - i * 8, loop[i % 4]!, loop[(i + 3) % 4]!));
    const t0 = performance.now();
    const html = render({ transitions: many, range: "24h", markers: [] });
    const ms = performance.now() - t0;
    const items = (html.match(/data-seg="\d+"/g) ?? []).length;
    expect(items).toBeLessThan(400); // bounded by pixels, not by transitions
    expect(html).toMatch(/aria-label="\d+ state changes from/);
    expect(ms).toBeLessThan(1000);
  });
});

describe("StateTimeline: spans no agent watched", () => {
  // 11:02:10 – 11:07:55 UTC, inside the 1 h window (11:00 – 12:00)
  const gap = { fromMs: NOW - 3470_000, toMs: NOW - 3125_000 };
  const label = "Agent not running 11:02:10 – 11:07:55 (5 min 45 s): states rebuilt from systemd&#x27;s timestamps, substates not observed";

  it("draws a gap in view as a hatched veil with a focusable, labelled handle", () => {
    const html = render({ unobserved: [gap] });
    expect(html.match(/data-gap="\d+"/g) ?? []).toHaveLength(1);
    expect(html).toContain('role="list" aria-label="Times no agent was running, in view"');
    expect(html).toMatch(new RegExp(`role="listitem" aria-label="${label.replace(/[()]/g, "\\$&")}" tabindex="0" data-gap="0"`));
    // the veil: the gap's own hatch pattern over a grey wash, not blocking the states below
    expect(html).toMatch(/<pattern id="gdtl[\w-]*-gap"/);
    expect(html).toMatch(/data-testid="gap-veils"/);
    expect(html).toMatch(/<g aria-hidden="true" pointer-events="none" data-testid="gap-veils">.*fill="url\(#gdtl[\w-]*-gap\)"/);
    expect(html).toContain("fill:var(--gd-gap-wash)");
    // wide enough (5 min 45 s of 1 h ≈ 71 px) for the short text, not the long one
    expect(html).toMatch(/<text[^>]*>no agent<\/text>/);
    // the rebuilt states below are still drawn and focusable
    expect(html.match(/data-seg="\d+"/g) ?? []).toHaveLength(6);
  });

  it("places the veil with the segments' x-scale", () => {
    // a gap exactly as long as the 11:10:00 – 11:53:20 running segment covers it to the pixel
    const html = render({ unobserved: [{ fromMs: NOW - 3000_000, toMs: NOW - 400_000 }] });
    const seg = html.match(/aria-label="active \(running\) from 11:10:00 to 11:53:20[^"]*"[^>]*><rect x="([\d.]+)" y="20" width="([\d.]+)"/);
    expect(seg).not.toBeNull();
    expect(html).toContain(`<rect x="${seg![1]}" y="1" width="${seg![2]}" height="63" style="fill:var(--gd-gap-wash)"`);
    expect(seg![1]).toBe("168"); // 44 + 600 s of 3 600 s × 744 px
  });

  it("draws nothing for a gap outside the window, and no legend entry", () => {
    const html = render({ unobserved: [{ fromMs: NOW - 5 * 3_600_000, toMs: NOW - 4 * 3_600_000 }] });
    expect(html).not.toContain("data-gap=");
    expect(html).not.toContain("gap-veils");
    expect(html).not.toContain("Agent not running");
    expect(html).not.toContain("agent not running");
    expect(html).not.toContain('data-testid="legend-gap"');
  });

  it("has a legend entry only while a gap is in view", () => {
    expect(render()).not.toContain("agent not running");
    const html = render({ unobserved: [gap] });
    expect(html).toMatch(/<ul[^>]*aria-label="Legend">.*<li[^>]*data-testid="legend-gap"><svg[^>]*>.*<\/svg>agent not running<\/li>/);
    // at 6 h the same gap is still in view
    expect(render({ unobserved: [gap], range: "6h" })).toContain('data-testid="legend-gap"');
  });

  it("tells screen readers: in the summary and in a table with both ends and the duration", () => {
    const html = render({ unobserved: [gap] });
    expect(html).toMatch(
      /aria-label="State timeline of vllm.service, 11:00 to now, following now\. Now active \(running\) for 1 min 30 s\.[^"]* No agent was running during 1 span in view: states rebuilt from systemd&#x27;s timestamps, substates not observed\."/,
    );
    expect(html).toContain(
      "<caption>Times no agent was running, in view: states rebuilt from systemd&#x27;s timestamps, substates not observed; no GPU memory samples</caption>",
    );
    expect(html).toContain("<td>11:02:10</td><td>11:07:55</td><td>5 min 45 s</td>");
  });

  it("labels a gap clipped by the window with its real ends", () => {
    const long = { fromMs: NOW - 2 * 3_600_000, toMs: NOW - 3_300_000 }; // 10:00:00 – 11:05:00
    const html = render({ unobserved: [long] });
    expect(html).toContain('aria-label="Agent not running 10:00:00 – 11:05:00 (1 h 05 min): states rebuilt');
    // starts at the plot's left edge, no dashed edge line there
    expect(html).toContain('<rect x="44" y="1"');
  });
});
