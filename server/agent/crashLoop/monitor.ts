/**
 * Watches every unit's transitions for restart loops (./detect.ts, rule GPUDECK_CRASH_LOOP) and
 * puts a `crashLoop` marker on the unit's summary while one lasts, so the overview shows it. A
 * marker is re-checked on each transition of its unit and every 30 s (a loop ends when its
 * restarts age out of the window). Whether systemd's start limit can end the loop is read from
 * the unit's settings once, when the loop is first seen.
 */
import type { CrashLoopMarker, CrashLoopReport } from "../../contract/faults";
import type { StoredEvent } from "../../contract/events";
import type { UnitSummary, UnitTransition } from "../../contract/types";
import { findProcessExit, isManagerMessage, lastOutputLines } from "../../diagnosis/history";
import type { SystemdAdapter } from "../adapter";
import { detectCrashLoop, startLimitCanStop } from "./detect";
import type { CrashLoopRule } from "./rule";

/** What the monitor needs of the hub. */
export interface CrashLoopHub {
  readonly host: { systemd: Pick<SystemdAdapter, "get" | "journal"> };
  timeline(unit: string): { transitions: UnitTransition[] };
  units(): UnitSummary[];
  subscribe(listener: (e: StoredEvent) => void, opts?: { internal?: boolean }): () => void;
  addUnitFields(fields: (u: UnitSummary) => Partial<UnitSummary> | null): () => void;
  refreshUnit(name: string): void;
}

const RECHECK_MS = 30_000;

export class CrashLoopMonitor {
  private readonly markers = new Map<string, CrashLoopMarker>();
  private readonly disposers: (() => void)[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly hub: CrashLoopHub,
    readonly rule: CrashLoopRule,
    private readonly clock: () => number = Date.now,
  ) {
    this.disposers.push(hub.addUnitFields((u) => (this.markers.has(u.name) ? { crashLoop: this.markers.get(u.name)! } : null)));
    this.disposers.push(
      hub.subscribe(
        (e) => {
          // after the hub has handed this event to every listener: a refresh emits in turn
          if (e.event.kind === "transition") {
            const name = e.event.transition.unit;
            queueMicrotask(() => this.check(name));
          }
        },
        { internal: true },
      ),
    );
    for (const u of hub.units()) this.check(u.name);
    this.timer = setInterval(() => {
      for (const name of [...this.markers.keys()]) this.check(name);
    }, RECHECK_MS);
    this.timer.unref?.();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const d of this.disposers.splice(0)) d();
  }

  marker(name: string): CrashLoopMarker | null {
    return this.markers.get(name) ?? null;
  }

  /** Re-evaluate one unit now. */
  check(name: string): void {
    const found = detectCrashLoop(this.hub.timeline(name).transitions, this.clock(), this.rule);
    const before = this.markers.get(name);
    if (!found) {
      if (before) {
        this.markers.delete(name);
        this.hub.refreshUnit(name);
      }
      return;
    }
    const next: CrashLoopMarker = { ...found, startLimitStops: before?.startLimitStops ?? null };
    if (before && before.restarts === next.restarts && before.lastAtUsec === next.lastAtUsec) return;
    this.markers.set(name, next);
    this.hub.refreshUnit(name);
    if (next.startLimitStops === null) void this.readLimit(name);
  }

  /** The evidence "stop the loop" shows: restart times, how each run ended, the last line the service wrote. */
  async report(name: string): Promise<CrashLoopReport> {
    const [detail, journal] = await Promise.all([this.hub.host.systemd.get(name), this.hub.host.systemd.journal(name, 300).catch(() => [])]);
    const transitions = this.hub.timeline(name).transitions;
    const marker = this.markers.get(name) ?? null;
    const since = marker ? marker.firstAtUsec : (this.clock() - this.rule.windowMs) * 1000;
    const restarts = transitions
      .filter((t) => t.to.subState === "auto-restart" && t.atUsec >= since)
      .slice(-50)
      .map((t) => {
        const exit = findProcessExit(journal, "main", t.atUsec - 60_000_000, t.atUsec + 1_000_000);
        const how = exit ? (exit.code === "exited" ? `status=${exit.status}` : `signal=${exit.status}`) : null;
        return { atUsec: t.atUsec, result: t.result, exit: how };
      });
    // the service's own output: lines of its processes (systemd's own carry PID 1, or none)
    const own = journal.filter((e) => e.pid !== null && e.pid !== 1 && !isManagerMessage(e) && e.message.trim() !== "");
    const last = own.at(-1) ?? lastOutputLines(journal, 1).at(0);
    return {
      unit: name,
      marker,
      restarts,
      restart: detail?.restart ?? "",
      restartUsec: detail?.restartUsec ?? 0,
      startLimitBurst: detail?.startLimitBurst ?? 0,
      startLimitIntervalUsec: detail?.startLimitIntervalUsec ?? 0,
      lastLogLine: last ? { atUsec: last.atUsec, message: last.message } : null,
    };
  }

  private async readLimit(name: string): Promise<void> {
    const detail = await this.hub.host.systemd.get(name).catch(() => null);
    const m = this.markers.get(name);
    if (!detail || !m) return;
    this.markers.set(name, { ...m, startLimitStops: startLimitCanStop(detail) });
    this.hub.refreshUnit(name);
  }
}
