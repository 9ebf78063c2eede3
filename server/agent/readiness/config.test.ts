import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadReadinessConfig, parseReadinessConfig, readinessSettings, ReadinessConfigError } from "./config";

describe("readiness overrides (GPUDECK_READINESS / GPUDECK_READINESS_FILE)", () => {
  it("none set: no overrides", () => {
    expect(loadReadinessConfig({})).toEqual({ units: [] });
  });

  it("per unit or glob; an exact name wins over a glob written before it", () => {
    const c = parseReadinessConfig(
      JSON.stringify({
        "vllm-*.service": { probe: false },
        "vllm-big.service": { probeUrl: "http://127.0.0.1:8001/health", engine: "vllm" },
        "llama-*.service": { engine: "llama.cpp" },
      }),
    );
    expect(readinessSettings(c, "vllm-big.service")).toEqual({ probeUrl: "http://127.0.0.1:8001/health", engine: "vllm" });
    expect(readinessSettings(c, "vllm-small.service")).toEqual({ probe: false });
    expect(readinessSettings(c, "llama-3.service")).toEqual({ engine: "llama.cpp" });
    expect(readinessSettings(c, "tgi.service")).toBeNull();
  });

  it("errors name the unit and the key", () => {
    const err = (text: string) => {
      try {
        parseReadinessConfig(text);
      } catch (e) {
        expect(e).toBeInstanceOf(ReadinessConfigError);
        return (e as Error).message;
      }
      throw new Error("no error");
    };
    expect(err("{")).toMatch(/^GPUDECK_READINESS is not valid JSON/);
    expect(err(JSON.stringify({ "a.service": { probeUrl: "http://10.9.9.9:8000/health" } }))).toBe(
      'GPUDECK_READINESS: "a.service".probeUrl must point at this host (loopback or one of its own addresses), got 10.9.9.9',
    );
    expect(err(JSON.stringify({ "a.service": { probeUrl: "http://user:pw@127.0.0.1/health" } }))).toBe(
      'GPUDECK_READINESS: "a.service".probeUrl must not carry a user or password',
    );
    expect(err(JSON.stringify({ "a.service": { probeUrl: "ftp://127.0.0.1/" } }))).toMatch(/"a\.service"\.probeUrl must start with http/);
    expect(err(JSON.stringify({ "a.service": { engine: "triton" } }))).toMatch(/^GPUDECK_READINESS: "a\.service"\.engine /);
    expect(err(JSON.stringify({ "a.service": { probe: "off" } }))).toMatch(/^GPUDECK_READINESS: "a\.service"\.probe /);
    expect(err(JSON.stringify({ "a.service": { probeURL: "x" } }))).toBe(
      'GPUDECK_READINESS: "a.service" unknown key "probeURL" (known: engine, probeUrl, probe, healAfter, healMax)',
    );
    expect(err("[]")).toMatch(/^GPUDECK_READINESS: /);
  });

  it("from a file; both set, or an unreadable file, is an error", () => {
    const dir = mkdtempSync(join(tmpdir(), "gpudeck-readiness-"));
    try {
      const file = join(dir, "readiness.json");
      writeFileSync(file, JSON.stringify({ "x.service": { engine: "ollama" } }));
      expect(loadReadinessConfig({ GPUDECK_READINESS_FILE: file }).units).toEqual([{ pattern: "x.service", settings: { engine: "ollama" } }]);
      expect(() => loadReadinessConfig({ GPUDECK_READINESS_FILE: file, GPUDECK_READINESS: "{}" })).toThrow(
        "set GPUDECK_READINESS or GPUDECK_READINESS_FILE, not both",
      );
      expect(() => loadReadinessConfig({ GPUDECK_READINESS_FILE: join(dir, "missing.json") })).toThrow(
        /^GPUDECK_READINESS_FILE \(.*missing\.json\): cannot read it/,
      );
      writeFileSync(file, JSON.stringify({ "x.service": { engine: "nope" } }));
      expect(() => loadReadinessConfig({ GPUDECK_READINESS_FILE: file })).toThrow(/^GPUDECK_READINESS_FILE \(.*\): "x\.service"\.engine/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("self-healing: healAfter as a duration, healMax 2 an hour unless given; healMax alone is an error", () => {
    const c = parseReadinessConfig(JSON.stringify({ "vllm-*.service": { healAfter: "5m" }, "tgi.service": { healAfter: "90s", healMax: 5 } }));
    expect(readinessSettings(c, "vllm-a.service")).toEqual({ healAfterMs: 300_000, healMax: 2 });
    expect(readinessSettings(c, "tgi.service")).toEqual({ healAfterMs: 90_000, healMax: 5 });
    expect(() => parseReadinessConfig(JSON.stringify({ "a.service": { healAfter: "5 minutes" } }))).toThrow(
      'GPUDECK_READINESS: "a.service".healAfter must be a duration of 1s…24h such as "90s", "5m" or "1h", got "5 minutes"',
    );
    expect(() => parseReadinessConfig(JSON.stringify({ "a.service": { healMax: 3 } }))).toThrow('"a.service".healMax needs healAfter beside it');
    expect(() => parseReadinessConfig(JSON.stringify({ "a.service": { healAfter: "1m", healMax: 0 } }))).toThrow(/"a.service".healMax/);
  });
});
