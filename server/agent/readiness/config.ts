/**
 * Per-unit readiness overrides: GPUDECK_READINESS (JSON) or GPUDECK_READINESS_FILE (a JSON file),
 * keyed by unit name or glob:
 *
 *   { "vllm-big.service": { "probeUrl": "http://127.0.0.1:8001/health" },
 *     "llama-*.service":  { "engine": "llama.cpp" },
 *     "vllm-batch.service": { "probe": false } }
 *
 * engine: which engine runs (when ExecStart does not say); probeUrl: the endpoint to probe
 * (loopback or an address of this host only; 2xx = serving); probe: false = no probes (serving
 * once the engine logs its ready line). Errors name the unit and the key.
 *
 * Opt-in self-healing (../selfHeal/): healAfter ("20s", "5m", "1h"): a unit that was serving and
 * has failed its probe that long while systemd still calls it active gets a GPU-aware restart by
 * the agent; healMax (default 2): at most that many such restarts an hour.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { ENGINE_KINDS, type EngineKind } from "../../contract/readiness";
import { globToRegExp } from "../../contract/unitNames";
import { isHostLocal } from "./localAddress";

export class ReadinessConfigError extends Error {}

export interface UnitReadinessConfig {
  engine?: EngineKind;
  probeUrl?: string;
  probe?: boolean;
  /** ms: self-heal after the probe has failed this long (absent: no self-healing) */
  healAfterMs?: number;
  /** self-heal restarts an hour at most (default DEFAULT_HEAL_MAX when healAfter is set) */
  healMax?: number;
}

export const DEFAULT_HEAL_MAX = 2;

export interface ReadinessConfig {
  /** in the order written; the first entry whose key matches a unit applies (an exact name first) */
  units: { pattern: string; settings: UnitReadinessConfig }[];
}

export const EMPTY_READINESS_CONFIG: ReadinessConfig = { units: [] };

const probeUrlSchema = z
  .string()
  .max(2000)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: `is not a URL (e.g. http://127.0.0.1:8000/health), got ${JSON.stringify(value)}` });
      return;
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") ctx.addIssue({ code: "custom", message: "must start with http:// or https://" });
    else if (url.username || url.password) ctx.addIssue({ code: "custom", message: "must not carry a user or password" });
    else if (!isHostLocal(url.hostname)) {
      ctx.addIssue({ code: "custom", message: `must point at this host (loopback or one of its own addresses), got ${url.hostname}` });
    }
  });

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3600_000 };

/** "20s", "5m", "1h" → ms (1 s … 24 h) */
const healAfterSchema = z
  .string()
  .max(20)
  .transform((value, ctx) => {
    const m = /^(\d{1,6})([smh])$/.exec(value.trim());
    const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : NaN;
    if (!m || ms < 1000 || ms > 24 * 3600_000) {
      ctx.addIssue({ code: "custom", message: `must be a duration of 1s…24h such as "90s", "5m" or "1h", got ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    return ms;
  });

const unitSchema = z
  .object({
    engine: z.enum(ENGINE_KINDS as [EngineKind, ...EngineKind[]]).optional(),
    probeUrl: probeUrlSchema.optional(),
    probe: z.boolean().optional(),
    healAfter: healAfterSchema.optional(),
    healMax: z.number({ error: "must be a whole number of restarts an hour (1…60)" }).int().min(1).max(60).optional(),
  })
  .strict();

const configSchema = z.record(z.string().min(1).max(300), unitSchema);

/** GPUDECK_READINESS / GPUDECK_READINESS_FILE, or no overrides when neither is set. */
export function loadReadinessConfig(env: Readonly<Record<string, string | undefined>>): ReadinessConfig {
  const inline = env.GPUDECK_READINESS?.trim();
  const file = env.GPUDECK_READINESS_FILE?.trim();
  if (inline && file) throw new ReadinessConfigError("set GPUDECK_READINESS or GPUDECK_READINESS_FILE, not both");
  if (!inline && !file) return EMPTY_READINESS_CONFIG;
  let text = inline ?? "";
  const source = inline ? "GPUDECK_READINESS" : `GPUDECK_READINESS_FILE (${file})`;
  if (file) {
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new ReadinessConfigError(`${source}: cannot read it: ${(err as Error).message}`);
    }
  }
  return parseReadinessConfig(text, source);
}

export function parseReadinessConfig(text: string, source = "GPUDECK_READINESS"): ReadinessConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ReadinessConfigError(`${source} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const [unit, key] = issue.path.map(String);
    const where = unit === undefined ? "" : key === undefined ? ` "${unit}"` : ` "${unit}".${key}`;
    const message =
      issue.code === "unrecognized_keys"
        ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")} (known: engine, probeUrl, probe, healAfter, healMax)`
        : issue.message;
    throw new ReadinessConfigError(`${source}:${where} ${message}`);
  }
  return {
    units: Object.entries(parsed.data).map(([pattern, { healAfter, healMax, ...rest }]) => {
      if (healMax !== undefined && healAfter === undefined) throw new ReadinessConfigError(`${source}: "${pattern}".healMax needs healAfter beside it`);
      const settings: UnitReadinessConfig = { ...rest };
      if (healAfter !== undefined) Object.assign(settings, { healAfterMs: healAfter, healMax: healMax ?? DEFAULT_HEAL_MAX });
      return { pattern, settings };
    }),
  };
}

/** The overrides for one unit (an exact key wins over a glob), or null. */
export function readinessSettings(config: ReadinessConfig, unit: string): UnitReadinessConfig | null {
  const exact = config.units.find((u) => u.pattern === unit);
  if (exact) return exact.settings;
  return config.units.find((u) => globToRegExp(u.pattern).test(unit))?.settings ?? null;
}
