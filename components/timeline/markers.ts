/**
 * Action markers: someone acted on the unit (from the audit log). Which are in view, and how
 * they read; drawing is in ActionMarkers.tsx.
 */
import { formatTime } from "@/server/contract/format";

/** Someone acted on the unit (from the audit log). */
export interface ActionMarker {
  atMs: number;
  /** who: user name */
  user: string;
  /** what: start | stop | restart | reset-failed | kill … */
  action: string;
  reason?: string;
  /** systemd's job result when known: done | failed | timeout | canceled … */
  jobResult?: string;
  auditId?: string | number;
  /** link to the audit entry, e.g. /audit?id=42 */
  href?: string;
}

const FAILED_JOB_RESULTS = new Set(["failed", "timeout", "canceled", "dependency"]);

/** The job the action queued did not get done: the marker is drawn in the failure colour. */
export function jobFailed(m: ActionMarker): boolean {
  return m.jobResult != null && FAILED_JOB_RESULTS.has(m.jobResult);
}

/** Markers inside [fromMs, toMs], oldest first (equal times keep their order). */
export function markersInView(markers: readonly ActionMarker[], fromMs: number, toMs: number): ActionMarker[] {
  return markers.filter((m) => m.atMs >= fromMs && m.atMs <= toMs).sort((a, b) => a.atMs - b.atMs);
}

/** "restart by alice at 11:53:19, reason: GPU memory leak, job result: done" */
export function markerLabel(m: ActionMarker, timeZone?: string): string {
  const parts = [`${m.action} by ${m.user} at ${formatTime(m.atMs, { timeZone })}`];
  if (m.reason) parts.push(`reason: ${m.reason}`);
  if (m.jobResult) parts.push(`job result: ${m.jobResult}`);
  return parts.join(", ");
}
