/**
 * Case 9: a unit in deactivating — stopping normally, or a stop stuck in stop-sigterm /
 * stop-sigkill (a process ignoring SIGTERM, or in D state), with the time until SIGKILL.
 */
import type { Diagnosis, Evidence } from "../../contract/diagnosis";
import { formatCmdline, formatDurationWords, formatState, formatUsecSetting } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import type { DiagnosisContext } from "../context";
import { quote, stateEvidence } from "../evidence";
import { lastTransitionInto } from "../history";
import { kindOfPhase } from "../lastFailure";
import { controlCommand, processCommandText } from "../processes";
import { hasTimeout } from "../startDeadline";

/** A stop in stop-sigterm for longer than this is "stuck" (a clean stop takes milliseconds). */
export const STOP_STUCK_AFTER_MS = 5_000;

export const stoppingCase: DiagnosisCase = {
  id: "stopping",
  codes: ["stopping", "stop-stuck"],
  diagnose: (ctx) => (ctx.unit.activeState === "deactivating" ? diagnoseDeactivating(ctx) : null),
};

function diagnoseDeactivating(ctx: DiagnosisContext): Diagnosis {
  const u = ctx.unit;
  const entered = ctx.stateEnteredMs;
  const inState = entered === null ? null : ctx.now - entered;
  const evidence: Evidence[] = [stateEvidence(ctx)];
  const main = u.mainProcess ?? u.processes.find((p) => p.pid === u.mainPid) ?? u.processes[0] ?? null;
  if (main) evidence.push({ label: "Process", value: `PID ${main.pid} (${main.state}): ${processCommandText(main.cmdline, 160)}`, source: "proc" });
  if (u.processes.length > 1) evidence.push({ label: "Processes left", value: String(u.processes.length), source: "proc" });
  const stopSetting = formatUsecSetting(u.timeoutStopUsec);
  evidence.push({ label: "TimeoutStopSec", value: stopSetting, source: "systemd" });

  // Why it is stopping, when a start timed out or failed.
  let cause = "";
  if (u.result && u.result !== "success") {
    const point = ctx.failurePoint;
    const lastDeactivate = lastTransitionInto(ctx.transitions, (to) => to.activeState === "deactivating" && to.subState === u.subState);
    const phase = lastDeactivate ? kindOfPhase(lastDeactivate.from) : point ? kindOfPhase(point.phase) : "unknown";
    const phaseName = phase === "start-pre" ? "in ExecStartPre" : phase === "start" ? "in ExecStart" : phase === "start-post" ? "in ExecStartPost" : "";
    cause = u.result === "timeout" ? `Start timed out${phaseName ? ` ${phaseName}` : ""}; ` : `Failed (Result=${u.result}); `;
    evidence.push({ label: "Result", value: u.result, source: "systemd" });
  }
  const who = main ? `PID ${main.pid}${main.cmdline.length > 0 ? ` (${main.cmdline[0].split("/").pop()})` : ""}` : "the unit's processes";
  const dState = main?.state === "uninterruptible";
  const dNote = dState ? "; it is in D state (uninterruptible, often a GPU driver wait), which even SIGKILL cannot end until the kernel call returns" : "";
  const hasStopTimeout = hasTimeout(u.timeoutStopUsec);
  const deadline = entered !== null && hasStopTimeout ? entered + u.timeoutStopUsec / 1000 : null;
  const left = deadline === null ? null : deadline - ctx.now;

  if (u.subState === "stop-sigterm" || u.subState === "final-sigterm") {
    const forText = inState !== null ? ` ${formatDurationWords(inState)} ago` : "";
    const killText = !hasStopTimeout
      ? "; no SIGKILL will follow (TimeoutStopSec=infinity)"
      : left === null
        ? `; SIGKILL follows after TimeoutStopSec=${stopSetting}`
        : left >= 0
          ? `; systemd sends SIGKILL in ${formatDurationWords(left)}`
          : `; SIGKILL was due ${formatDurationWords(left)} ago`;
    const stuck = inState === null || inState >= STOP_STUCK_AFTER_MS;
    if (!stuck) {
      return {
        severity: "info",
        code: "stopping",
        headline: `${cause}Stopping: SIGTERM sent${forText}, waiting for ${who} to exit${killText}.`,
        evidence,
        etaMs: left !== null && left >= 0 ? left : undefined,
      };
    }
    return {
      severity: !hasStopTimeout || (left !== null && left < 0) || dState ? "critical" : "warning",
      code: "stop-stuck",
      headline: `${cause}Stop stuck: ${who} ${main ? "has" : "have"} ignored SIGTERM for ${formatDurationWords(inState ?? 0)}${killText}${dNote}.`,
      evidence,
      nextStep: {
        text: hasStopTimeout
          ? `Wait for SIGKILL${left !== null && left >= 0 ? ` in ${formatDurationWords(left)}` : ""}, or kill it now (\`systemctl kill -s SIGKILL ${ctx.name}\`).`
          : `Kill it (\`systemctl kill -s SIGKILL ${ctx.name}\`); consider a finite TimeoutStopSec=.`,
      },
      etaMs: left !== null && left >= 0 ? left : undefined,
    };
  }
  if (u.subState === "stop-sigkill" || u.subState === "final-sigkill") {
    return {
      severity: "critical",
      code: "stop-stuck",
      headline: `${cause}Stop stuck: SIGKILL sent ${formatDurationWords(inState ?? 0)} ago but ${who} is still there${dNote || "; it is probably stuck in the kernel (D state)"}.`,
      evidence,
      nextStep: { text: "Check the process state (`ps -o pid,stat,wchan -p …`) and dmesg for GPU driver errors (Xid); a reboot may be needed." },
      etaMs: left !== null && left >= 0 ? left : undefined,
    };
  }
  // stop (ExecStop), stop-post (ExecStopPost), stop-watchdog …
  const control = controlCommand(ctx);
  const cmd = control.argv ? `: ${quote(formatCmdline(control.argv, 120))}` : "";
  const label = u.subState === "stop" ? "ExecStop" : u.subState === "stop-post" ? "ExecStopPost" : formatState(u);
  const slow = inState !== null && inState >= STOP_STUCK_AFTER_MS;
  const nextSignal =
    left === null ? "" : left >= 0 ? `; systemd moves on (SIGTERM) in ${formatDurationWords(left)}` : `; its timeout passed ${formatDurationWords(left)} ago`;
  return {
    severity: slow ? "warning" : "info",
    code: "stopping",
    headline: `${cause}Stopping: ${label} running for ${formatDurationWords(inState ?? 0)}${cmd}${nextSignal}.`,
    evidence,
    etaMs: left !== null && left >= 0 ? left : undefined,
  };
}
