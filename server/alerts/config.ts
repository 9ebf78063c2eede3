/**
 * Alert settings from the environment (the config file maps its keys onto these):
 *   GPUDECK_ALERT_WEBHOOK_URL      one generic webhook channel, for a quick start
 *   GPUDECK_ALERT_CHANNELS         a JSON list of channels, each as alerts.channels.add takes it
 *   GPUDECK_ALERT_RULES            JSON: rules off, thresholds, per host/unit pattern (./rules.ts)
 *   GPUDECK_ALERT_GROUP_SECONDS    grouping window, under 10 (default 5)
 *   GPUDECK_ALERT_RETRY_HOURS      how long a message is retried before it is given up (default 24)
 *   GPUDECK_ALERT_RATE_PER_MINUTE  messages per channel per minute at most (default 30)
 *   GPUDECK_MAINTENANCE            JSON: planned maintenance windows, read-only (./maintenance.ts)
 */
import { channelsFromEnv, ChannelConfigError, type Channel } from "./channels";
import { maintenanceFromEnv, MaintenanceError, type MaintenanceWindow } from "./maintenance";
import { AlertRulesError, parseAlertRules, type RuleTable } from "./rules";
import { DEFAULT_DELIVERY, type DeliveryTimings } from "./timings";

export interface AlertsConfig {
  rules: RuleTable;
  /** channels the environment names (read-only in the UI) */
  channels: Channel[];
  /** alert starts of one host and rule within this become one message */
  groupWindowMs: number;
  /** how often duration rules are looked at (events are looked at as they come) */
  tickMs: number;
  /** every condition must hold this long before its alert opens (a state systemd only passes through is none) */
  settleMs: number;
  /** how long the agent may take to diagnose a unit for a message */
  diagnosisTimeoutMs: number;
  delivery: DeliveryTimings;
  /** maintenance windows of the config file / GPUDECK_MAINTENANCE (read-only; maintenance.create adds to the database) */
  maintenance: MaintenanceWindow[];
}

export class AlertsConfigError extends Error {}

export const DEFAULT_GROUP_WINDOW_MS = 5000;
export const DEFAULT_TICK_MS = 5000;
export const DEFAULT_DIAGNOSIS_TIMEOUT_MS = 5000;
export const DEFAULT_SETTLE_MS = 2000;

function num(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number, ok: (n: number) => boolean, rule: string): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || !ok(n)) throw new AlertsConfigError(`${name} must be ${rule} (got "${raw}")`);
  return n;
}

export function loadAlertsConfig(env: Readonly<Record<string, string | undefined>>): AlertsConfig {
  try {
    const groupSeconds = num(
      env,
      "GPUDECK_ALERT_GROUP_SECONDS",
      DEFAULT_GROUP_WINDOW_MS / 1000,
      (n) => n >= 0 && n < 10,
      "a number of seconds from 0 to under 10",
    );
    const retryHours = num(
      env,
      "GPUDECK_ALERT_RETRY_HOURS",
      DEFAULT_DELIVERY.giveUpAfterMs / 3_600_000,
      (n) => n > 0 && n <= 24 * 30,
      "a positive number of hours (at most 720)",
    );
    const rate = num(
      env,
      "GPUDECK_ALERT_RATE_PER_MINUTE",
      DEFAULT_DELIVERY.ratePerMinute,
      (n) => Number.isInteger(n) && n >= 1 && n <= 10_000,
      "a whole number from 1",
    );
    return {
      rules: parseAlertRules(env.GPUDECK_ALERT_RULES),
      channels: channelsFromEnv(env),
      groupWindowMs: groupSeconds * 1000,
      tickMs: DEFAULT_TICK_MS,
      settleMs: DEFAULT_SETTLE_MS,
      diagnosisTimeoutMs: DEFAULT_DIAGNOSIS_TIMEOUT_MS,
      delivery: { ...DEFAULT_DELIVERY, giveUpAfterMs: retryHours * 3_600_000, ratePerMinute: rate },
      maintenance: maintenanceFromEnv(env.GPUDECK_MAINTENANCE),
    };
  } catch (err) {
    if (err instanceof AlertRulesError || err instanceof ChannelConfigError || err instanceof MaintenanceError) throw new AlertsConfigError(err.message);
    throw err;
  }
}
