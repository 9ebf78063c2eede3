/**
 * The sampler's `--query-compute-apps` one-shot call (its own timeout, bounded output, every
 * failure an outcome with a message) and the policy of when to make it: when some GPU's used
 * memory moved since the last call began, and how long an answer stays good.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { ComputeApp } from "../../contract/types";
import { errCode, fmtSec, OUTPUT_TAIL_CHARS } from "./childProcess";
import { COMPUTE_APP_QUERY_FIELDS, describeNvidiaSmiFailure, parseComputeAppsCsv } from "./csv";

const APPS_MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

export type AppsOutcome = { ok: true; atMs: number; apps: ComputeApp[] } | { ok: false; atMs: number; message: string };

/** Used MiB per GPU uuid (null: the GPU reports none). */
export type UsedByGpu = ReadonlyMap<string, number | null>;

/** Whether the holders may have changed: `latest` differs from `basis` (the round before the last call began). */
export function memoryMoved(basis: UsedByGpu | null, latest: UsedByGpu): boolean {
  if (!basis || basis.size !== latest.size) return true;
  for (const [uuid, used] of latest) {
    // no memory.used (GB10: unified memory): the per-process numbers are all there is
    if (used == null || basis.get(uuid) !== used) return true;
  }
  return false;
}

/** How old a successful answer may be and still go into a sample. */
export function appsMaxAgeMs(intervalMs: number, appsTimeoutMs: number, appsRefreshMs: number): number {
  return Math.max(3 * intervalMs, appsTimeoutMs + intervalMs) + appsRefreshMs;
}

export interface ComputeAppsCall {
  path: string;
  env: NodeJS.ProcessEnv | undefined;
  /** the call is SIGKILLed after this long */
  timeoutMs: number;
  /** when it started: the outcome's atMs */
  startedAt: number;
}

/**
 * Start one call; `done` gets its outcome once, with the child it came from (null when spawn
 * threw, in which case `done` runs before this returns null). Returns the running child.
 */
export function spawnComputeApps(call: ComputeAppsCall, done: (outcome: AppsOutcome, from: ChildProcess | null) => void): ChildProcess | null {
  const { path, env, timeoutMs, startedAt } = call;
  const args = [`--query-compute-apps=${COMPUTE_APP_QUERY_FIELDS.join(",")}`, "--format=csv,nounits"];
  let child: ChildProcess;
  try {
    child = spawn(path, args, { stdio: ["ignore", "pipe", "pipe"], env });
  } catch (e) {
    done({ ok: false, atMs: startedAt, message: describeNvidiaSmiFailure({ spawnErrorCode: errCode(e) ?? "EINVAL", path }) }, null);
    return null;
  }
  let stdout = "";
  let stderr = "";
  let timedOut = false;
  let finished = false;
  const timeout = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, timeoutMs);
  const finish = (outcome: AppsOutcome) => {
    if (finished) return;
    finished = true;
    clearTimeout(timeout);
    done(outcome, child);
  };
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (d: string) => {
    if (stdout.length < APPS_MAX_OUTPUT_CHARS) stdout += d;
  });
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (d: string) => {
    stderr = (stderr + d).slice(-OUTPUT_TAIL_CHARS);
  });
  child.on("error", (err) => {
    finish({ ok: false, atMs: startedAt, message: describeNvidiaSmiFailure({ spawnErrorCode: errCode(err) ?? err.message, path }) });
  });
  child.on("close", (code, signal) => {
    if (timedOut) {
      finish({ ok: false, atMs: startedAt, message: `compute-apps query timed out after ${fmtSec(timeoutMs)}` });
    } else if (code !== 0) {
      finish({ ok: false, atMs: startedAt, message: describeNvidiaSmiFailure({ exitCode: code, signal, output: `${stdout}\n${stderr}`, path }) });
    } else {
      finish({ ok: true, atMs: startedAt, apps: parseComputeAppsCsv(stdout).apps });
    }
  });
  return child;
}
