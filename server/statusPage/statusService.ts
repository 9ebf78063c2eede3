/**
 * The status page's data, for any number of viewers at the cost of a few: the document is built
 * at most every `documentTtlMs` and shared; each unit's uptime comes from its agent's timeline
 * (`units.timeline`, 30 days of transitions at systemd's timestamps) and is kept
 * `uptimeTtlMs`, refreshed in the background (a slow agent delays nobody: its figures are the
 * last ones, or unknown). Incidents come from the alert history.
 */
import type { Actor } from "../contract/actors";
import type { AlertRuleId } from "../contract/alerts";
import type { StatusDocument, StatusPageSettings, StatusService, StatusUptime, UpdateStatusPageInput } from "../contract/statusPage";
import type { UnitTransition } from "../contract/types";
import type { HostLink } from "../panel/fleet/hostLink";
import type { LazyStore } from "../store/lazyStore";
import { alertView, unitAlertsSince } from "../alerts/alertStore";
import { coversUnit, maintenanceUntil, occurrencesBetween, type MaintenanceWindow } from "../alerts/maintenance";
import { incidentsOf, SERVICE_RULES } from "./incidents";
import { clockUtc, combine, serviceDefs, unitStatus, worst, type ServiceDef } from "./services";
import { checkAccess, envTokenHint, readSettings, rotateToken, updateSettings, type Access, type StatusSettings } from "./settings";
import { anySteps, unitSteps, uptimes, WINDOWS, type Excluded, type ReadinessStep, type Step } from "./uptime";

const STATUS_ACTOR: Actor = { user: "gpudeck-status-page", role: "viewer", unitPatterns: [] };

export interface StatusFleet {
  all(): HostLink[];
  get(name: string): HostLink | undefined;
}

export interface StatusServiceOptions {
  fleet: StatusFleet;
  store: LazyStore;
  envToken: string | null;
  panelUrl: string;
  clock?: () => number;
  documentTtlMs?: number;
  uptimeTtlMs?: number;
  settingsTtlMs?: number;
  /** how long a first request waits for uptime figures before it is answered without them */
  uptimeWaitMs?: number;
  /** planned maintenance windows (the alerts service's): "Planned maintenance until …", and left out of uptime */
  maintenance?: () => Promise<MaintenanceWindow[]>;
}

interface UptimeEntry {
  at: number;
  steps: Step[] | null;
  refreshing: Promise<void> | null;
}

export class StatusPageService {
  private readonly clock: () => number;
  private doc: { at: number; value: Promise<StatusDocument> } | null = null;
  private settingsCache: { at: number; value: Promise<StatusSettings> } | null = null;
  private readonly uptime = new Map<string, UptimeEntry>();

  constructor(private readonly o: StatusServiceOptions) {
    this.clock = o.clock ?? Date.now;
  }

  async settings(): Promise<StatusSettings> {
    const now = this.clock();
    if (!this.settingsCache || now - this.settingsCache.at > (this.o.settingsTtlMs ?? 2000)) {
      const value = this.o.store.get().then((s) => readSettings(s.db));
      this.settingsCache = { at: now, value };
      value.catch(() => (this.settingsCache = null));
    }
    return this.settingsCache.value;
  }

  async access(token: string | null): Promise<Access> {
    return checkAccess(await this.settings(), this.o.envToken, token);
  }

  url(): string {
    return `${this.o.panelUrl.replace(/\/+$/, "")}/status`;
  }

  async view(): Promise<StatusPageSettings> {
    const s = await this.settings();
    return {
      enabled: s.enabled || this.o.envToken !== null,
      public: s.public,
      showHosts: s.showHosts,
      groups: s.groups,
      tokenHint: s.tokenHint ?? envTokenHint(this.o.envToken),
      fromEnvironment: this.o.envToken !== null,
      url: this.url(),
      updatedAtMs: s.updatedAtMs,
      updatedBy: s.updatedBy,
    };
  }

  async update(change: UpdateStatusPageInput, by: string): Promise<StatusPageSettings> {
    const store = await this.o.store.get();
    await updateSettings(store.db, change, by, await store.nowMs());
    this.invalidate();
    return this.view();
  }

  async rotateToken(by: string): Promise<{ token: string; url: string }> {
    const store = await this.o.store.get();
    const { token } = await rotateToken(store.db, by, await store.nowMs());
    this.invalidate();
    return { token, url: `${this.url()}?token=${token}` };
  }

  private invalidate(): void {
    this.settingsCache = null;
    this.doc = null;
  }

  /** The page's data (shared by every viewer for `documentTtlMs`). */
  async document(): Promise<StatusDocument> {
    const now = this.clock();
    if (!this.doc || now - this.doc.at > (this.o.documentTtlMs ?? 2000)) {
      const value = this.build(now);
      this.doc = { at: now, value };
      value.catch(() => (this.doc = null));
    }
    return this.doc.value;
  }

  private async build(now: number): Promise<StatusDocument> {
    const settings = await this.settings();
    const defs = serviceDefs(settings.groups, this.o.fleet.all());
    const since = now - WINDOWS["30d"];
    const units = defs.flatMap((d) => d.units);
    const store = await this.o.store.get();
    const alertRows = (await unitAlertsSince(store.db, units, since)).map(alertView).filter((a) => SERVICE_RULES.includes(a.rule as AlertRuleId));
    await this.refreshUptimes(units, now);
    const windows = (await this.o.maintenance?.().catch(() => [])) ?? [];
    const services = defs.map((d) => this.service(d, settings, alertRows, windows, now));
    return { generatedAtMs: now, overall: worst(services.map((s) => s.state)), services };
  }

  private service(
    d: ServiceDef,
    settings: StatusSettings,
    alerts: ReturnType<typeof alertView>[],
    windows: readonly MaintenanceWindow[],
    now: number,
  ): StatusService {
    const status = combine(d.units.map((u) => unitStatus(this.o.fleet.get(u.host), u.unit)));
    const mine = alerts.filter((a) => d.units.some((u) => u.host === a.host && u.unit === a.unit));
    const perUnit = d.units.map((u) => this.uptime.get(`${u.host}:${u.unit}`)?.steps ?? null).filter((s): s is Step[] => s !== null);
    // planned maintenance of any of its units is left out of its uptime (where the window says so)
    const excluded: Excluded[] = windows
      .filter((w) => w.excludeFromUptime && d.units.some((u) => coversUnit(w, u.host, u.unit)))
      .flatMap((w) => occurrencesBetween(w, now - WINDOWS["30d"], now));
    const uptime: StatusUptime = perUnit.length ? uptimes(anySteps(perUnit), now, excluded) : { "24h": null, "7d": null, "30d": null };
    const until = d.units.reduce<number | null>((max, u) => {
      const t = maintenanceUntil(windows, u.host, u.unit, now);
      return t !== null && (max === null || t > max) ? t : max;
    }, null);
    const investigating = mine.some((a) => a.resolvedAtMs === null && a.acknowledgedBy);
    let words = status.words;
    if (until !== null)
      words = `Planned maintenance until ${until - now < 86_400_000 ? clockUtc(until) : `${new Date(until).toISOString().slice(0, 16).replace("T", " ")} UTC`}`;
    else if (investigating && status.state !== "serving") words = `${words} — Investigating`;
    return {
      id: d.id,
      name: d.name,
      state: status.state,
      words,
      sinceMs: status.sinceMs,
      ...(settings.showHosts ? { hosts: [...new Set(d.units.map((u) => u.host))] } : {}),
      uptime,
      incidents: incidentsOf(mine),
      ...(until !== null ? { maintenanceUntilMs: until } : {}),
      ...(investigating ? { investigating: true } : {}),
    };
  }

  /** Refresh stale uptime figures; waits for them at most `uptimeWaitMs` (then answers with what it has). */
  private async refreshUptimes(units: { host: string; unit: string }[], now: number): Promise<void> {
    const ttl = this.o.uptimeTtlMs ?? 60_000;
    const waits: Promise<void>[] = [];
    for (const u of units) {
      const key = `${u.host}:${u.unit}`;
      const entry = this.uptime.get(key) ?? { at: 0, steps: null, refreshing: null };
      this.uptime.set(key, entry);
      if (entry.refreshing) waits.push(entry.refreshing);
      else if (now - entry.at > ttl) {
        entry.refreshing = this.fetchSteps(u.host, u.unit, now)
          .then((steps) => {
            // an agent that could not answer is asked again on the next build, not after the TTL
            if (!steps) return;
            entry.steps = steps;
            entry.at = this.clock();
          })
          .finally(() => (entry.refreshing = null));
        waits.push(entry.refreshing);
      }
    }
    if (waits.length) await Promise.race([Promise.allSettled(waits), new Promise((r) => setTimeout(r, this.o.uptimeWaitMs ?? 3000).unref?.())]);
  }

  private async fetchSteps(host: string, unit: string, now: number): Promise<Step[] | null> {
    const link = this.o.fleet.get(host);
    if (!link || link.state !== "connected") return null;
    try {
      const t = (await link.client.units.timeline.query(
        { name: unit, sinceMs: now - WINDOWS["30d"] },
        { context: { actor: STATUS_ACTOR }, signal: AbortSignal.timeout(10_000) },
      )) as { transitions: UnitTransition[]; readiness?: ReadinessStep[] };
      return unitSteps(t.transitions, t.readiness ?? []);
    } catch {
      return null;
    }
  }
}
