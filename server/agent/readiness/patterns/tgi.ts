/**
 * Text Generation Inference (`text-generation-launcher`): download, shards, warm-up, then the
 * router's "Connected". Records look like
 * `2025-05-01T03:12:04.123Z  INFO text_generation_launcher: Starting shard rank=0`.
 */
import { num, type LinePattern } from "./types";

export const TGI_PATTERNS: LinePattern[] = [
  {
    id: "tgi-download",
    re: /Starting check and download process|Starting download process/,
    meaning: () => ({ stage: "downloading weights" }),
  },
  {
    id: "tgi-shard",
    // "Starting shard rank=0", "Waiting for shard to be ready... rank=0"
    re: /Starting shard\b|Waiting for shard to be ready/,
    meaning: () => ({ stage: "loading weights" }),
  },
  {
    id: "tgi-shard-ready",
    // "Shard ready in 22.412315678s rank=0"
    re: /Shard ready in ([\d.]+)s/,
    meaning: (m) => ({ stage: "weights loaded", timing: { stage: "loading weights", seconds: num(m[1]) } }),
  },
  {
    id: "tgi-warmup",
    // "Starting Webserver", "Warming up model"
    re: /Starting Webserver|Warming up model/,
    meaning: () => ({ stage: "warming up" }),
  },
  {
    id: "tgi-ready",
    // "text_generation_router::server: router/src/server.rs:2341: Connected"
    re: /text_generation_router(?:::server)?:.*\bConnected$/,
    meaning: () => ({ ready: true }),
  },
  {
    id: "tgi-shard-failed",
    // "Shard 0 failed to start", "Shard complete standard error output: …"
    re: /Shard \d+ failed to start|Error when initializing model/,
    meaning: () => ({ failure: "a shard failed to start", generic: true }),
  },
];
