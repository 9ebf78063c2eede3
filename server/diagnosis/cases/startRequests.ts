/**
 * Start requests that did nothing. After a start systemd skipped or refused, the unit is simply
 * inactive, and "not started since systemd loaded it" would be wrong. The last start request
 * (an action through gpudeck, a start job seen on the bus, or systemd's own journal line) and
 * its result say what happened:
 * - skipped: `ExecCondition=` exited 1–254 (Result=exec-condition; the job is "done"), or a
 *   Condition…= was not met — a skip, not a failure;
 * - refused: systemd would not queue the job at all ("Unit nothere.service not found." for a
 *   Requires=/BindsTo= unit that is not installed, …); only the action's error records it.
 * A start job that ended "dependency" is the dependency case's (it comes after this one).
 */
import type { Diagnosis, Evidence } from "../../contract/diagnosis";
import { formatClock, formatCmdline, formatTimestamp } from "../../contract/format";
import type { ExecRun, JournalEntry } from "../../contract/types";
import type { DiagnosisCase } from "../case";
import { usecToMs, type DiagnosisContext } from "../context";
import { ago, logEvidence, quote, stateEvidence } from "../evidence";
import { lastTransitionInto } from "../history";

interface StartRequest {
  atMs: number;
  jobId: number | null;
  jobType: string;
  /** the job's result; null while unknown or when there was no job */
  result: string | null;
  /** systemd refused the request (no job) */
  error: string | null;
  user: string | null;
}

const SKIP_LINE = /Skipped due to '(exec-condition|[\w-]+)'|Condition check resulted in .* being skipped/;
const NOT_FOUND = /Unit (\S+?) not found/;

/** An inactive or failed unit, after the restart-cycle case and before the dependency case. */
export const startRequestCase: DiagnosisCase = {
  id: "start-request",
  codes: ["start-skipped", "start-refused"],
  diagnose(ctx) {
    const u = ctx.unit;
    if (u.activeState !== "inactive" && u.activeState !== "failed") return null;
    if (u.job || ctx.facts.job) return null; // a job is queued or running: newer than any past request
    const req = lastStartRequest(ctx);
    const skip = lastSkipLine(ctx.facts.journal);
    if (req?.error && !/systemd is unreachable/.test(req.error) && !startedSince(ctx, req.atMs)) return refused(ctx, req);
    if (u.activeState !== "inactive") return null;
    const skippedAt = req && req.error === null && (req.result === "done" || req.result === "skipped") ? req.atMs : skip ? skip.atUsec / 1000 : null;
    if (u.result === "exec-condition" || (skip && skippedAt !== null && !startedSince(ctx, skippedAt))) return skipped(ctx, req, skip);
    return null;
  },
};

/** An inactive unit nobody started, before the stopped case: a start would be refused (a required unit is not installed). */
export const wouldBeRefusedCase: DiagnosisCase = {
  id: "start-would-be-refused",
  codes: ["start-refused"],
  diagnose: (ctx) => (ctx.unit.activeState === "inactive" ? missingRequirement(ctx) : null),
};

/** The newest start/restart: actions (with their errors) and finished start jobs, joined by job id. */
function lastStartRequest(ctx: DiagnosisContext): StartRequest | null {
  const isStart = (t: string) => t === "start" || t === "restart";
  const actions = (ctx.facts.recentActions ?? []).filter((a) => a.unit === ctx.name && isStart(a.action));
  const jobs = (ctx.facts.recentJobs ?? []).filter((j) => j.unit === ctx.name && j.phase === "finished" && isStart(j.jobType));
  const out: StartRequest[] = actions.map((a) => {
    const job = a.jobId === null ? undefined : jobs.find((j) => j.jobId === a.jobId);
    return { atMs: a.atMs, jobId: a.jobId, jobType: a.action, result: job?.result ?? (a.jobId !== null ? a.outcome : null), error: a.error, user: a.user };
  });
  for (const j of jobs) {
    if (!actions.some((a) => a.jobId === j.jobId))
      out.push({ atMs: j.atMs, jobId: j.jobId, jobType: j.jobType, result: j.result ?? null, error: null, user: null });
  }
  return out.sort((a, b) => a.atMs - b.atMs).at(-1) ?? null;
}

function lastSkipLine(journal: readonly JournalEntry[]): JournalEntry | null {
  for (let i = journal.length - 1; i >= 0; i--) if (journal[i].pid === 1 && SKIP_LINE.test(journal[i].message)) return journal[i];
  return null;
}

/** Did the unit really start (not just check its condition) after `atMs`? */
function startedSince(ctx: DiagnosisContext, atMs: number): boolean {
  const t = lastTransitionInto(ctx.transitions, (to) => to.activeState === "active" || (to.activeState === "activating" && to.subState !== "condition"));
  const mainStart = usecToMs(ctx.unit.execMainStartUsec);
  return (t !== null && t.atUsec / 1000 > atMs) || (mainStart !== null && mainStart > atMs);
}

function requestWords(ctx: DiagnosisContext, req: StartRequest | null, fallbackMs: number | null): string {
  const atMs = req?.atMs ?? fallbackMs;
  const parts: string[] = [];
  if (req?.jobId) parts.push(`job #${req.jobId}`);
  if (req?.user) parts.push(`by ${req.user}`);
  if (atMs !== null) parts.push(ago(ctx, atMs));
  return parts.length > 0 ? ` (${parts.join(", ")})` : "";
}

function requestEvidence(req: StartRequest | null): Evidence[] {
  if (!req) return [];
  const result = req.error
    ? `refused: ${req.error}`
    : req.result
      ? `job ${req.jobId !== null ? `#${req.jobId} ` : ""}finished "${req.result}"`
      : "job result not known yet";
  return [
    {
      label: "Last start request",
      value: `${req.jobType}${req.user ? ` by ${req.user}` : ""} at ${formatTimestamp(req.atMs)}: ${result}`,
      source: req.user ? "gpudeck" : "systemd",
    },
  ];
}

function skipped(ctx: DiagnosisContext, req: StartRequest | null, skip: JournalEntry | null): Diagnosis {
  const u = ctx.unit;
  const cond = (u.execCondition ?? []).find((c) => c.code === 1 && c.status > 0 && c.status < 255) ?? null;
  const when = requestWords(ctx, req, skip ? skip.atUsec / 1000 : null);
  const evidence: Evidence[] = [stateEvidence(ctx), { label: "Result", value: u.result || "unknown", source: "systemd" }, ...requestEvidence(req)];
  let headline: string;
  let text: string;
  if (u.result === "exec-condition" || cond) {
    const cmd = cond ?? u.execCondition?.[0] ?? null;
    const what = cmd ? `ExecCondition ${quote(formatCmdline(cmd.argv, 120))}` : "its ExecCondition= command";
    const status = cond ? `exited with status ${cond.status}` : "exited with a status from 1 to 254";
    headline = `The last start${when} was skipped, not failed: ${what} ${status}, so systemd did not run the service (Result=exec-condition).`;
    if (cmd) evidence.push(conditionEvidence(cmd));
    evidence.push(...logEvidence(conditionOutput(ctx.facts.journal, cond)));
    text =
      "ExecCondition= decides whether the service runs here: fix what it checks (its output is in the evidence) or change the condition, then start it again.";
  } else {
    headline = `The last start${when} was skipped, not failed: a Condition…= setting of the unit was not met, so systemd did not run the service.`;
    text = `See which condition failed (\`systemctl status ${ctx.name}\` names it), make it hold or change it, then start it again.`;
  }
  if (skip) evidence.push(...logEvidence([skip]));
  return { severity: "warning", code: "start-skipped", headline, evidence, nextStep: { text, action: { kind: "start", unit: ctx.name } } };
}

function conditionEvidence(cmd: ExecRun): Evidence {
  const ran =
    cmd.pid > 0
      ? `; PID ${cmd.pid} ${cmd.code === 1 ? `exited with status ${cmd.status}` : `ended (code ${cmd.code}, status ${cmd.status})`}${cmd.exitUsec > 0 ? ` at ${formatClock(cmd.exitUsec / 1000)}` : ""}`
      : "";
  return { label: "ExecCondition", value: `${formatCmdline(cmd.argv, 200)}${ran}`, source: "systemd" };
}

/** What the condition command printed (its own PID's lines). */
function conditionOutput(journal: readonly JournalEntry[], cond: ExecRun | null): JournalEntry[] {
  if (!cond || cond.pid <= 0) return [];
  return journal.filter((e) => e.pid === cond.pid && e.message.trim() !== "").slice(-3);
}

function refused(ctx: DiagnosisContext, req: StartRequest): Diagnosis {
  const error = req.error!.replace(/^systemd refused \S+ of \S+: /, "");
  const missing = NOT_FOUND.exec(error)?.[1] ?? null;
  const when = requestWords(ctx, req, null);
  const evidence: Evidence[] = [stateEvidence(ctx), ...requestEvidence(req)];
  const still = ctx.unit.activeState === "failed" ? " It is still failed from before." : "";
  if (missing) {
    const required = ctx.unit.requires.includes(missing);
    if (required) evidence.push({ label: "Requires", value: `${missing}: not installed (LoadState=not-found)`, source: "systemd" });
    return {
      severity: "critical",
      code: "start-refused",
      headline: `The last start${when} was refused by systemd: ${missing}${required ? ", which it requires (Requires=/BindsTo=)," : ""} is not installed (${quote(error)}); no job ran.${still}`,
      evidence,
      nextStep: {
        text: `Install ${missing}, or remove it from Requires=/BindsTo= in ${ctx.unit.fragmentPath || "the unit file"} and run \`systemctl daemon-reload\`; then start this one again.`,
      },
    };
  }
  return {
    severity: "critical",
    code: "start-refused",
    headline: `The last start${when} was refused by systemd: ${quote(error)}; no job ran.${still}`,
    evidence,
    nextStep: { text: "Fix what systemd names, then start it again.", action: { kind: "start", unit: ctx.name } },
  };
}

/** No start request known, but a start would be refused: a unit it requires is not installed. */
function missingRequirement(ctx: DiagnosisContext): Diagnosis | null {
  const missing = (ctx.facts.dependencies ?? []).filter((d) => d.loadState === "not-found").map((d) => d.name);
  if (missing.length === 0) return null;
  return {
    severity: "warning",
    code: "start-refused",
    headline: `Not running, and a start would be refused: ${missing.join(", ")}, which it requires (Requires=/BindsTo=), ${missing.length === 1 ? "is" : "are"} not installed.`,
    evidence: [
      stateEvidence(ctx),
      ...missing.map((m) => ({ label: "Requires", value: `${m}: not installed (LoadState=not-found)`, source: "systemd" as const })),
    ],
    nextStep: {
      text: `Install ${missing.join(", ")}, or remove ${missing.length === 1 ? "it" : "them"} from Requires=/BindsTo= in ${ctx.unit.fragmentPath || "the unit file"}.`,
    },
  };
}
