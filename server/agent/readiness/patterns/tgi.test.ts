import { afterAll, describe, expect, it } from "vitest";
import { expectAllPatternsCovered, expectNothing, expectOnly } from "./testing";

const launcher = (msg: string) => `2025-05-01T03:12:04.123456Z  INFO text_generation_launcher: ${msg}`;

describe("TGI log lines", () => {
  afterAll(() => expectAllPatternsCovered("tgi"));

  it("download, shards, warm-up, then the router connects", () => {
    expectOnly("tgi", launcher("Starting check and download process for meta-llama/Llama-3.1-8B-Instruct"), "tgi-download");
    expectOnly("tgi", "2025-05-01T03:12:04Z  INFO download: text_generation_launcher: Starting download process.", "tgi-download");
    expectOnly("tgi", "2025-05-01T03:12:30Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0", "tgi-shard");
    expectOnly("tgi", "2025-05-01T03:12:40Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... rank=0", "tgi-shard");
    expect(
      expectOnly("tgi", "2025-05-01T03:12:52Z  INFO shard-manager: text_generation_launcher: Shard ready in 22.412315678s rank=0", "tgi-shard-ready").meaning
        .timing,
    ).toEqual({
      stage: "loading weights",
      seconds: 22.412315678,
    });
    expectOnly("tgi", launcher("Starting Webserver"), "tgi-warmup");
    expectOnly("tgi", "2025-05-01T03:12:55Z  INFO text_generation_router_v3: backends/v3/src/lib.rs:125: Warming up model", "tgi-warmup");
    expect(
      expectOnly("tgi", "2025-05-01T03:13:10Z  INFO text_generation_router::server: router/src/server.rs:2341: Connected", "tgi-ready").meaning.ready,
    ).toBe(true);
  });

  it("a shard that fails", () => {
    expectOnly("tgi", "2025-05-01T03:12:52Z ERROR text_generation_launcher: Shard 0 failed to start", "tgi-shard-failed");
  });

  it("request logs are nothing", () => {
    expectNothing(
      "tgi",
      "2025-05-01T03:14:00Z  INFO generate{parameters=GenerateParameters { … }}: text_generation_router::server: router/src/server.rs:402: Success",
    );
  });
});
