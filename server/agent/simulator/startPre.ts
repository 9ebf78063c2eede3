/**
 * A simulated ExecStartPre: the unit sits in activating/start-pre with the control process
 * running until it passes (wait-gpu-free: no GPU above the limit), fails (exit code), or
 * TimeoutStartSec ends it (stop-sigterm, then failed/timeout), as measured on systemd 252.
 */
import type { SimUnit } from "./simUnit";
import type { SimUnitOps } from "./unitOps";
import type { PreBehavior } from "./units";

/** Spawn the ExecStartPre and enter start-pre; `passed` runs when it exits successfully. */
export function runStartPre(ops: SimUnitOps, u: SimUnit, pre: PreBehavior, passed: () => void): void {
  const { world } = ops;
  const spec = u.spec;
  u.control = world.spawn(spec.execStartPre[0]!, spec.name);
  ops.setState(u, "activating", "start-pre", { result: "success" });
  const startedAt = ops.now();
  ops.after(u, spec.timeoutStartMs, () => {
    if (u.summary.subState !== "start-pre") return;
    ops.log(u, `${spec.name}: start-pre operation timed out. Terminating.`, 3);
    world.exit(u.control!.pid, 0);
    ops.setState(u, "deactivating", "stop-sigterm", { result: "timeout" });
    ops.after(u, 150, () => {
      u.control = null;
      ops.setState(u, "failed", "failed");
      ops.log(u, `${spec.name}: Failed with result 'timeout'.`, 4);
      ops.log(u, `Failed to start ${spec.description}.`, 3);
      ops.finishJob(u, "failed");
    });
  });
  if (pre.kind === "fail") {
    ops.after(u, pre.afterMs, () => {
      if (u.summary.subState !== "start-pre") return;
      ops.log(u, pre.message, 3, u.control!.pid);
      world.exit(u.control!.pid, 0);
      u.control = null;
      ops.log(u, `${spec.name}: Control process exited, code=exited, status=${pre.exitCode}/INVALIDARGUMENT`, 4);
      ops.setState(u, "failed", "failed", { result: "exit-code" });
      ops.log(u, `${spec.name}: Failed with result 'exit-code'.`, 4, null, "failed");
      ops.log(u, `Failed to start ${spec.description}.`, 3);
      ops.finishJob(u, "failed");
    });
    return;
  }
  const poll = () => {
    if (u.summary.subState !== "start-pre" || !u.control) return;
    const busy = world.gpus.map((g) => ({ g, used: world.usedMiB(g.uuid) })).filter((x) => x.used > pre.maxUsedMiB);
    if (busy.length === 0) {
      world.exit(u.control.pid, 0);
      u.control = null;
      passed();
      return;
    }
    if (ops.now() - startedAt < 1000 || Math.round((ops.now() - startedAt) / pre.pollMs) % 5 === 0) {
      const worst = Math.max(...busy.map((x) => x.used));
      ops.log(u, `GPU memory still in use (${busy.length} GPUs above ${pre.maxUsedMiB} MiB, max ${worst} MiB), waiting`, 6, u.control.pid);
    }
    ops.after(u, pre.pollMs, poll);
  };
  poll();
}
