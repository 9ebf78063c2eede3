import { describe, expect, it } from "vitest";
import { parse } from "smol-toml";
import { lineOf, tomlKeyLines } from "./keyLines";

const TEXT = `# comment = not a key
top = 1

[agent]
units = [
  "vllm-*.service",   # fake = "key" in a comment
  "x = y",
]
listen = "127.0.0.1:9300"
notes = """
data_dir = "inside a multi-line string"
"""
data_dir = "/var/lib/x"
"quoted.key" = 2
nested.dotted = true

[panel.session]
idle_minutes = 5
inline = { a = 1, b = [1, 2] }

[[hosts]]
name = "a"

[[hosts]]
name = "b"
url = 'http://x'
`;

describe("tomlKeyLines", () => {
  it("the fixture is valid TOML (the locator only runs on parsed text)", () => {
    expect(() => parse(TEXT)).not.toThrow();
  });

  const lines = tomlKeyLines(TEXT);

  it("finds keys under their table, skipping comments, multi-line arrays and strings", () => {
    expect(lines.get("top")).toBe(2);
    expect(lines.get("agent")).toBe(4);
    expect(lines.get("agent.units")).toBe(5);
    expect(lines.get("agent.listen")).toBe(9);
    expect(lines.get("agent.data_dir")).toBe(13);
    expect(lines.has("fake")).toBe(false);
    expect(lines.has("agent.x")).toBe(false);
  });

  it("reads quoted and dotted keys", () => {
    expect(lines.get("agent.quoted.key")).toBe(14);
    expect(lines.get("agent.nested.dotted")).toBe(15);
    expect(lines.get("agent.nested")).toBe(15);
  });

  it("numbers arrays of tables from 0 and finds their keys", () => {
    expect(lines.get("hosts.0")).toBe(21);
    expect(lines.get("hosts.0.name")).toBe(22);
    expect(lines.get("hosts.1")).toBe(24);
    expect(lines.get("hosts.1.url")).toBe(26);
  });

  it("falls back to the enclosing key for values inside inline tables and arrays", () => {
    expect(lineOf(lines, ["panel", "session", "inline", "b", 1])).toBe(19);
    expect(lineOf(lines, ["agent", "units", 1])).toBe(5);
    expect(lineOf(lines, ["hosts", 1, "token"])).toBe(24);
    expect(lineOf(lines, ["nothing"])).toBeNull();
  });
});
