/**
 * A unit action as a call to systemd's Manager. Start/stop/restart queue a job (mode "replace")
 * and return at once with its id; reset-failed and kill (SIGKILL to the main process) have none.
 * Never waits for a job: its progress arrives as JobNew/JobRemoved signals.
 */
import type { UnitAction } from "../../contract/types";
import type { BusConnection } from "./bus";
import { jobIdFromPath, str } from "./dbusValues";
import type { JobTracker } from "./jobTracker";
import { MANAGER, SD_PATH, type SystemdCalls } from "./systemdCalls";

const SIGKILL = 9;

/** `name` must already have passed assertManageableUnit. */
export async function queueUnitAction(
  conn: BusConnection,
  calls: SystemdCalls,
  jobs: JobTracker,
  name: string,
  action: UnitAction,
): Promise<{ jobId: number | null }> {
  const call = (member: string, signature: string, body: unknown[]) =>
    calls.call(conn, { path: SD_PATH, interface: MANAGER, member, signature, body }).catch((err: unknown) => {
      throw new Error(`systemd refused ${action} of ${name}: ${(err as Error).message}`);
    });
  switch (action) {
    case "start":
    case "stop":
    case "restart": {
      const member = action === "start" ? "StartUnit" : action === "stop" ? "StopUnit" : "RestartUnit";
      const [jobPath] = await call(member, "ss", [name, "replace"]);
      const jobId = jobIdFromPath(str(jobPath));
      // systemd forgets a job's type once it is gone; JobRemoved may come before we could ask
      if (jobId !== null) jobs.rememberType(jobId, action);
      return { jobId };
    }
    case "reset-failed":
      await call("ResetFailedUnit", "s", [name]);
      return { jobId: null };
    case "kill":
      await call("KillUnit", "ssi", [name, "main", SIGKILL]);
      return { jobId: null };
    default:
      throw new Error(`unknown action ${JSON.stringify(action)}`);
  }
}
