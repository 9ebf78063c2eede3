import { describe, expect, it } from "vitest";
import { isSecretName, REDACTED, redactArgv, redactDeep, redactMemoSize, redactOutput, redactText } from "./redact";

describe("secret names", () => {
  it.each([
    "--api-key",
    "--hf-token",
    "-token",
    "--password",
    "--db-passwd",
    "--client-secret",
    "HF_TOKEN",
    "OPENAI_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "apikey",
    "--key",
  ])("%s is a secret", (name) => expect(isSecretName(name)).toBe(true));
  it.each([
    "--tokenizer",
    "--max-num-batched-tokens",
    "--api-key-file",
    "--hf-token-path",
    "--ssl-keyfile",
    "--port",
    "AWS_ACCESS_KEY_ID",
    "--tokenizer-mode",
    "PATH",
  ])("%s is not", (name) => expect(isSecretName(name)).toBe(false));
});

describe("redactArgv", () => {
  it("masks a secret flag's value, in either form, and leaves everything else", () => {
    const argv = ["vllm", "serve", "/models/x", "--api-key", "sk-1", "--hf-token=hf_2", "--tokenizer", "meta/llama", "--port", "8000"];
    expect(redactArgv(argv)).toEqual([
      "vllm",
      "serve",
      "/models/x",
      "--api-key",
      REDACTED,
      `--hf-token=${REDACTED}`,
      "--tokenizer",
      "meta/llama",
      "--port",
      "8000",
    ]);
  });

  it("masks inside a shell line: variables, flags, URLs with a password, Authorization headers", () => {
    const [, , script] = redactArgv([
      "/bin/sh",
      "-c",
      "HF_TOKEN=hf_x exec vllm --api-key 'sk-y' && curl -H 'Authorization: Bearer abcdefgh123' https://u:pw@h/x",
    ]);
    expect(script).toBe(`HF_TOKEN=${REDACTED} exec vllm --api-key '${REDACTED}' && curl -H 'Authorization: Bearer ${REDACTED}' https://u:${REDACTED}@h/x`);
  });

  it("does not take the next flag for a value, and is idempotent", () => {
    expect(redactArgv(["x", "--token", "--port", "1"])).toEqual(["x", "--token", "--port", "1"]);
    const once = redactArgv(["x", "--api-key", "k", "OPENAI_API_KEY=v"]);
    expect(redactArgv(once)).toEqual(once);
  });
});

describe("redactText", () => {
  it("masks a token in a URL's user part, and secrets in log lines", () => {
    expect(redactText("git clone https://ghp_abc@github.com/x")).toBe(`git clone https://${REDACTED}@github.com/x`);
    expect(redactText("+ exec vllm serve --api-key sk-123 --port 8000")).toBe(`+ exec vllm serve --api-key ${REDACTED} --port 8000`);
    expect(redactText("INFO: Uvicorn running on http://0.0.0.0:8000")).toBe("INFO: Uvicorn running on http://0.0.0.0:8000");
  });
});

describe("redactText remembers its answers (the same GPU sample's strings come every second)", () => {
  it("does not keep long texts, and returns strings without '=', ':' or space as they are", () => {
    const before = redactMemoSize();
    const long = `${"x ".repeat(600)}--password hunter2`;
    expect(redactText(long)).toBe(`${"x ".repeat(600)}--password ${REDACTED}`);
    expect(redactText("GPU-0b1c2d3e-aaaa-bbbb-cccc-000000000000")).toBe("GPU-0b1c2d3e-aaaa-bbbb-cccc-000000000000");
    expect(redactText("--api-key")).toBe("--api-key");
    expect(redactMemoSize()).toBe(before);
    // a tab or a no-break space is white space too
    expect(redactText("--api-key\tsk-1")).toBe(`--api-key\t${REDACTED}`);
    expect(redactText("Authorization:Bearer abcdefgh12345")).toContain(REDACTED);
  });
  it("answers the same again, for a remembered string too, and keeps at most 4096 of them", () => {
    const line = "vllm serve --api-key sk-remembered --port 8000";
    const first = redactText(line);
    expect(first).toBe(`vllm serve --api-key ${REDACTED} --port 8000`);
    expect(redactText(line)).toBe(first);
    for (let i = 0; i < 5000; i++) redactText(`HF_TOKEN=t${i} run`);
    expect(redactMemoSize()).toBeLessThanOrEqual(4096);
    expect(redactText("HF_TOKEN=t4999 run")).toBe(`HF_TOKEN=${REDACTED} run`);
    // evicted, asked again: the same answer
    expect(redactText(line)).toBe(first);
  });
});

describe("redactDeep / redactOutput", () => {
  it("copies, masking argv arrays and strings at any depth, leaving the input as it was", () => {
    const input = { execStart: [{ path: "/usr/bin/vllm", argv: ["vllm", "--api-key", "k"] }], note: "HF_TOKEN=t", n: 3, ok: true, none: null };
    const out = redactDeep(input);
    expect(out).toEqual({
      execStart: [{ path: "/usr/bin/vllm", argv: ["vllm", "--api-key", REDACTED] }],
      note: `HF_TOKEN=${REDACTED}`,
      n: 3,
      ok: true,
      none: null,
    });
    expect(input.execStart[0]!.argv[2]).toBe("k");
  });

  it("masks a stream item by item, keeping tracked() envelopes", async () => {
    const marker = Symbol("tracked");
    async function* source() {
      yield ["id-1", { message: "--token abc" }, marker];
      yield { message: "PASSWORD=x" };
    }
    const items: unknown[] = [];
    for await (const item of redactOutput(source()) as AsyncIterable<unknown>) items.push(item);
    expect(items).toEqual([["id-1", { message: `--token ${REDACTED}` }, marker], { message: `PASSWORD=${REDACTED}` }]);
  });
});

describe("well-known secret flags and URLs with credentials (issue 25, finding 12)", () => {
  it.each(["--token", "--password", "--auth", "--api-key", "--hf-token", "--basic-auth", "--auth-token", "--http-auth", "REDIS_AUTH"])(
    "%s is a secret",
    (name) => expect(isSecretName(name)).toBe(true),
  );
  it.each(["--no-auth", "--disable-auth", "--auth-file", "--auth-type", "--auth-url", "--oauth-client-id"])("%s is not", (name) =>
    expect(isSecretName(name)).toBe(false),
  );

  it("masks --flag value and --flag=value for each of them, as argv elements", () => {
    for (const flag of ["--token", "--password", "--auth", "--api-key", "--hf-token"]) {
      expect(redactArgv(["srv", flag, "s3cr3t-v4lue", "--port", "8000"]), flag).toEqual(["srv", flag, REDACTED, "--port", "8000"]);
      expect(redactArgv(["srv", `${flag}=s3cr3t-v4lue`, "model"]), flag).toEqual(["srv", `${flag}=${REDACTED}`, "model"]);
    }
  });

  it("masks them inside a shell line, quoted values whole", () => {
    const line = `exec srv --auth admin:hunter2 --password "two words" --token='t 1' TOKEN="x y" --port 8000 model`;
    const out = redactText(line);
    expect(out).toBe(`exec srv --auth ${REDACTED} --password "${REDACTED}" --token='${REDACTED}' TOKEN="${REDACTED}" --port 8000 model`);
    for (const leak of ["hunter2", "two", "words", "t 1", "x y"]) expect(out).not.toContain(leak);
  });

  it("masks credentials in a URL in any argument, also an empty user or an '@' in the password", () => {
    const argv = [
      "srv",
      "--model-url",
      "https://bob:pa55@models.example/x",
      "--cache=redis://:redispw@cache:6379/0",
      "--mirror=https://u:p@ss@mirror.example",
      "postgres://app:dbpw@db/gpudeck",
    ];
    const out = redactArgv(argv).join(" ");
    for (const leak of ["pa55", "redispw", "p@ss", "ss@mirror", "dbpw"]) expect(out).not.toContain(leak);
    expect(out).toContain(`https://bob:${REDACTED}@models.example/x`);
    expect(out).toContain(`redis://:${REDACTED}@cache:6379/0`);
    expect(out).toContain(`https://u:${REDACTED}@mirror.example`);
  });

  it("leaves switches, ports and query strings alone", () => {
    expect(redactArgv(["srv", "--no-auth", "meta/llama", "--port", "8000"])).toEqual(["srv", "--no-auth", "meta/llama", "--port", "8000"]);
    expect(redactText("listening on http://0.0.0.0:8000?contact=ops@example.com")).toBe("listening on http://0.0.0.0:8000?contact=ops@example.com");
    const once = redactText(`--password "a b" https://:pw@h`);
    expect(redactText(once)).toBe(once);
  });
});
