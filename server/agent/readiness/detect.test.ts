import { describe, expect, it } from "vitest";
import type { ExecCommand } from "../../contract/types";
import { parseContainerRun, parsePublish, shellWords } from "./argv";
import { detectEngine, ollamaHost } from "./detect";
import { isHostLocal, probeHost } from "./localAddress";

const cmd = (...argv: string[]): ExecCommand[] => [{ path: argv[0]!, argv, ignoreErrors: false }];
const target = (argv: string[], env: Record<string, string> = {}) => detectEngine(cmd(...argv), env);

describe("engine detection from ExecStart", () => {
  it("vllm serve and the OpenAI api_server module, port, host and model", () => {
    expect(target(["/opt/vllm/bin/vllm", "serve", "/models/kimi-k2.5", "--tensor-parallel-size", "8", "--port", "8000"])).toEqual({
      engine: "vllm",
      baseUrl: "http://127.0.0.1:8000",
      problem: null,
      metrics: true,
      model: "/models/kimi-k2.5",
      via: "ExecStart",
    });
    const api = target([
      "/usr/bin/python3",
      "-m",
      "vllm.entrypoints.openai.api_server",
      "--model",
      "meta-llama/Llama-3.1-8B-Instruct",
      "--port=8011",
      "--host",
      "127.0.0.1",
    ]);
    expect(api).toMatchObject({ engine: "vllm", baseUrl: "http://127.0.0.1:8011", model: "meta-llama/Llama-3.1-8B-Instruct" });
    expect(target(["vllm", "serve", "Qwen/Qwen3-8B", "--served-model-name", "qwen3"])).toMatchObject({ baseUrl: "http://127.0.0.1:8000", model: "qwen3" });
    expect(target(["vllm", "serve", "x", "--host", "::"])?.baseUrl).toBe("http://[::1]:8000");
  });

  it("SGLang, llama.cpp, Ollama (OLLAMA_HOST) and TGI with their defaults", () => {
    expect(target(["python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp", "8", "--enable-metrics"])).toMatchObject({
      engine: "sglang",
      baseUrl: "http://127.0.0.1:30000",
      metrics: true,
      model: "deepseek-ai/DeepSeek-V3",
    });
    expect(target(["python3", "-m", "sglang.launch_server", "--model-path", "m"])?.metrics).toBe(false);
    expect(target(["/usr/local/bin/llama-server", "-m", "/models/q.gguf", "--port", "8081", "--metrics"])).toMatchObject({
      engine: "llama.cpp",
      baseUrl: "http://127.0.0.1:8081",
      metrics: true,
      model: "/models/q.gguf",
    });
    expect(target(["/usr/local/bin/llama-server", "-m", "/models/q.gguf"], { LLAMA_ARG_PORT: "9090" })).toMatchObject({
      baseUrl: "http://127.0.0.1:9090",
      metrics: false,
    });
    expect(target(["/usr/bin/ollama", "serve"])).toMatchObject({ engine: "ollama", baseUrl: "http://127.0.0.1:11434", metrics: false });
    expect(target(["/usr/bin/ollama", "serve"], { OLLAMA_HOST: "0.0.0.0:11500" })?.baseUrl).toBe("http://127.0.0.1:11500");
    expect(target(["text-generation-launcher", "--model-id", "mistralai/Mistral-7B-v0.3", "--port", "8090"])).toMatchObject({
      engine: "tgi",
      baseUrl: "http://127.0.0.1:8090",
      model: "mistralai/Mistral-7B-v0.3",
    });
  });

  it("inside sh -c, env, numactl and other wrappers", () => {
    expect(target(["/bin/bash", "-c", "source /opt/venv/bin/activate && exec vllm serve /models/a --port 8100 --gpu-memory-utilization 0.9"])).toMatchObject({
      engine: "vllm",
      baseUrl: "http://127.0.0.1:8100",
      model: "/models/a",
    });
    expect(
      target([
        "/usr/bin/env",
        "CUDA_VISIBLE_DEVICES=0,1",
        "numactl",
        "--cpunodebind=0",
        "/opt/venv/bin/python",
        "-m",
        "sglang.launch_server",
        "--port",
        "30001",
      ])?.baseUrl,
    ).toBe("http://127.0.0.1:30001");
    // the port of the engine's command, not of a later one in the script
    expect(target(["/bin/sh", "-c", "llama-server -m /m.gguf --port 8085; echo done --port 1"])?.baseUrl).toBe("http://127.0.0.1:8085");
  });

  it("docker / podman run: the engine from the command or the image, the port from -p or --network host", () => {
    const vllm = target([
      "/usr/bin/docker",
      "run",
      "--rm",
      "--gpus",
      "all",
      "--ipc=host",
      "-p",
      "127.0.0.1:8000:8000",
      "-v",
      "/models:/models",
      "--name",
      "vllm",
      "vllm/vllm-openai:v0.9.1",
      "--model",
      "/models/x",
    ]);
    expect(vllm).toMatchObject({ engine: "vllm", baseUrl: "http://127.0.0.1:8000", via: "docker image vllm/vllm-openai:v0.9.1", model: "/models/x" });
    expect(target(["docker", "run", "-d", "-p", "9000:8000", "vllm/vllm-openai", "--model", "m"])?.baseUrl).toBe("http://127.0.0.1:9000");
    const sglang = target([
      "podman",
      "run",
      "--network=host",
      "lmsysorg/sglang:latest",
      "python3",
      "-m",
      "sglang.launch_server",
      "--model-path",
      "m",
      "--port",
      "30100",
    ]);
    expect(sglang).toMatchObject({ engine: "sglang", baseUrl: "http://127.0.0.1:30100", via: "podman image lmsysorg/sglang:latest" });
    expect(target(["docker", "run", "-p", "11434:11434", "-e", "OLLAMA_KEEP_ALIVE=24h", "ollama/ollama"])).toMatchObject({
      engine: "ollama",
      baseUrl: "http://127.0.0.1:11434",
    });
    expect(target(["docker", "run", "--gpus", "all", "-p", "8080:80", "ghcr.io/huggingface/text-generation-inference:3.0", "--model-id", "m"])?.baseUrl).toBe(
      "http://127.0.0.1:8080",
    );
    expect(
      target(["docker", "container", "run", "-p8082:8080", "ghcr.io/ggml-org/llama.cpp:server-cuda", "-m", "/models/m.gguf", "--host", "0.0.0.0"])?.baseUrl,
    ).toBe("http://127.0.0.1:8082");
    const unpublished = target(["docker", "run", "vllm/vllm-openai", "--model", "m"]);
    expect(unpublished).toMatchObject({
      engine: "vllm",
      baseUrl: null,
      problem: "port 8000 of the container is not published (-p); set probeUrl in GPUDECK_READINESS",
    });
    expect(target(["docker", "run", "-P", "vllm/vllm-openai"])?.problem).toMatch(/random host port/);
  });

  it("an engine bound to another machine's address is not probed", () => {
    const far = target(["vllm", "serve", "m", "--host", "10.255.1.2"]);
    expect(far).toMatchObject({
      engine: "vllm",
      baseUrl: null,
      problem: expect.stringMatching(/10\.255\.1\.2, which is not a loopback or host-local address/),
    });
    expect(target(["vllm", "serve", "m", "--port", "eighty"])?.problem).toMatch(/not a port number/);
  });

  it("nothing recognised", () => {
    expect(target(["/bin/sleep", "infinity"])).toBeNull();
    expect(target(["/usr/bin/python3", "train.py", "--serve"])).toBeNull();
    expect(target(["/usr/bin/docker", "run", "busybox", "sleep", "1"])).toBeNull();
  });
});

describe("argv helpers", () => {
  it("shell words: quotes, escapes, operators", () => {
    expect(shellWords(`exec vllm serve "/models/my model" --x 'a b' c\\ d && echo ok;ls|wc`)).toEqual([
      "exec",
      "vllm",
      "serve",
      "/models/my model",
      "--x",
      "a b",
      "c d",
      "&&",
      "echo",
      "ok",
      ";",
      "ls",
      "|",
      "wc",
    ]);
  });

  it("docker -p forms", () => {
    expect(parsePublish("8000")).toEqual({ hostIp: "", hostPort: null, containerPort: 8000 });
    expect(parsePublish("9000:8000/tcp")).toEqual({ hostIp: "", hostPort: 9000, containerPort: 8000 });
    expect(parsePublish("127.0.0.1:9000:8000")).toEqual({ hostIp: "127.0.0.1", hostPort: 9000, containerPort: 8000 });
    expect(parsePublish("[::1]:9000:8000")).toEqual({ hostIp: "::1", hostPort: 9000, containerPort: 8000 });
    expect(parsePublish("127.0.0.1::8000")).toEqual({ hostIp: "127.0.0.1", hostPort: null, containerPort: 8000 });
    expect(parsePublish("99999:1")).toBeNull();
  });

  it("docker run without an image is not a run", () => {
    expect(parseContainerRun(["docker", "run", "--rm"], 0)).toBeNull();
    expect(parseContainerRun(["docker", "ps"], 0)).toBeNull();
  });

  it("OLLAMA_HOST forms", () => {
    expect(ollamaHost(undefined)).toEqual({ host: "127.0.0.1", port: 11434 });
    expect(ollamaHost("0.0.0.0")).toEqual({ host: "0.0.0.0", port: 11434 });
    expect(ollamaHost(":11500")).toEqual({ host: "0.0.0.0", port: 11500 });
    expect(ollamaHost("http://[::1]:11434/")).toEqual({ host: "::1", port: 11434 });
  });
});

describe("host-local addresses", () => {
  const local = new Set(["10.0.0.5", "fe80::1"]);
  it("loopback, this host's own addresses and localhost; nothing else, no names", () => {
    expect(["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "10.0.0.5"].map((h) => isHostLocal(h, local))).toEqual([true, true, true, true, true, true]);
    expect(["10.0.0.6", "8.8.8.8", "example.com", "gpu-a.internal", "169.254.169.254"].map((h) => isHostLocal(h, local))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it("the probe address of a bind address", () => {
    expect(probeHost("0.0.0.0", local)).toEqual({ host: "127.0.0.1", problem: null });
    expect(probeHost("", local)).toEqual({ host: "127.0.0.1", problem: null });
    expect(probeHost("::", local)).toEqual({ host: "[::1]", problem: null });
    expect(probeHost("10.0.0.5", local)).toEqual({ host: "10.0.0.5", problem: null });
    expect(probeHost("fe80::1", local)).toEqual({ host: "[fe80::1]", problem: null });
    expect(probeHost("10.0.0.9", local).problem).toMatch(/not a loopback or host-local address/);
  });
});
