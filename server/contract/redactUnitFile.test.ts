import { describe, expect, it } from "vitest";
import { REDACTED, redactText } from "./redact";

const M = REDACTED;

describe("redactText on unit-file syntax", () => {
  it.each([
    ["Environment=HF_TOKEN=hf_abcdef0123456789", `Environment=HF_TOKEN=${M}`],
    ['Environment="HF_TOKEN=hf_abcdef0123456789"', `Environment="HF_TOKEN=${M}"`],
    ['Environment="A=1" "HF_TOKEN=hf_abcdef0123456789"', `Environment="A=1" "HF_TOKEN=${M}"`],
    ["Environment=A=1 OPENAI_API_KEY=sk-abc HF_HOME=/models", `Environment=A=1 OPENAI_API_KEY=${M} HF_HOME=/models`],
    ["Environment='HF_TOKEN=hf_x y'", `Environment='HF_TOKEN=${M}'`],
    ["ExecStart=/opt/vllm/bin/vllm serve /m --api-key sk-123 --port 8000", `ExecStart=/opt/vllm/bin/vllm serve /m --api-key ${M} --port 8000`],
    ["ExecStart=/usr/bin/env HF_TOKEN=hf_1 vllm serve", `ExecStart=/usr/bin/env HF_TOKEN=${M} vllm serve`],
  ])("%s", (input, want) => expect(redactText(input)).toBe(want));

  it("a whole file: every secret masked, the rest as written", () => {
    const file = [
      "[Service]",
      "Environment=HF_HOME=/models/.cache HF_TOKEN=hf_secret0123",
      'Environment="VLLM_LOGGING_LEVEL=INFO" "OPENAI_API_KEY=sk-secret"',
      "EnvironmentFile=-/etc/gpudeck/engine.env",
      "ExecStart=/opt/vllm/bin/vllm serve /models/x --port 8000",
    ].join("\n");
    const out = redactText(file);
    expect(out).not.toMatch(/hf_secret|sk-secret/);
    expect(out).toContain("HF_HOME=/models/.cache");
    expect(out).toContain('"VLLM_LOGGING_LEVEL=INFO"');
    expect(out).toContain("EnvironmentFile=-/etc/gpudeck/engine.env");
    expect(out).toContain("--port 8000");
  });

  it("harmless assignments inside assignments stay; a long chain costs no more than a few passes", () => {
    expect(redactText("Environment=PATH=/usr/bin:/bin")).toBe("Environment=PATH=/usr/bin:/bin");
    const chain = Array.from({ length: 2000 }, (_, i) => `a${i}`).join("=");
    expect(redactText(chain)).toBe(chain);
  });
});
