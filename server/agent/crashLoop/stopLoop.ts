/**
 * "Stop the loop": stop the unit, and once the stop job has ended, reset its failed state (which
 * also clears systemd's start-limit counter), so nothing restarts it and it can be started
 * cleanly later. Returns at once with the stop job and the evidence; both steps are recorded
 * as actions of whoever asked, with their reason.
 */
import type { CrashLoopReport } from "../../contract/faults";
import type { Hub } from "../hub/hub";
import type { ActionInput } from "../hub/actionLog";
import { waitForJob } from "../operations/jobWait";
import type { CrashLoopMonitor } from "./monitor";

/** How long to wait for the stop job before giving up on the reset (beyond TimeoutStopSec). */
const STOP_SLACK_MS = 30_000;
const STOP_CAP_MS = 15 * 60_000;

export interface StopLoopResult {
  jobId: number | null;
  actionId: string;
  evidence: CrashLoopReport;
}

export async function stopLoop(
  hub: Hub,
  monitor: CrashLoopMonitor,
  base: Omit<ActionInput, "action">,
  log: (m: string) => void = () => {},
): Promise<StopLoopResult> {
  const name = base.unit;
  const evidence = await monitor.report(name);
  const detail = await hub.host.systemd.get(name).catch(() => null);
  const reason = base.reason ?? "stop the loop";
  let jobId: number | null;
  try {
    ({ jobId } = await hub.host.systemd.act(name, "stop"));
  } catch (err) {
    hub.recordAction({ ...base, action: "stop", reason }, { error: (err as Error).message });
    throw err;
  }
  const record = hub.recordAction({ ...base, action: "stop", reason }, { jobId });
  void (async () => {
    if (jobId !== null) {
      const stopMs = detail && detail.timeoutStopUsec > 0 && detail.timeoutStopUsec < 2 ** 53 ? detail.timeoutStopUsec / 1000 : 90_000;
      const end = await waitForJob(hub, name, jobId, Math.min(STOP_CAP_MS, stopMs + STOP_SLACK_MS));
      if (!end.ended) {
        log(`stop the loop of ${name}: stop job ${jobId} did not end; not resetting its failed state`);
        return;
      }
    }
    try {
      const reset = await hub.host.systemd.act(name, "reset-failed");
      hub.recordAction({ ...base, action: "reset-failed", reason }, reset);
    } catch (err) {
      hub.recordAction({ ...base, action: "reset-failed", reason }, { error: (err as Error).message });
    }
    monitor.check(name);
  })();
  return { jobId, actionId: record.id, evidence };
}
