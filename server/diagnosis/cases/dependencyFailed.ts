/**
 * Case 8, dependencies: a start cancelled because a unit it requires failed (job result
 * "dependency"), naming that unit when the agent read the required units' states
 * (facts.dependencies, see ../dependencies.ts).
 */
import type { Diagnosis, Evidence, NextStep } from "../../contract/diagnosis";
import { formatDurationWords, formatState } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import { usecToMs, type DiagnosisContext } from "../context";
import { logEvidence, stateEvidence } from "../evidence";
import { lastDependencyFailure, lastTransitionInto } from "../history";
import type { DependencyState } from "../types";

/** For a failed or inactive unit, after the restart-cycle case: a cancelled start explains the state. */
export const dependencyFailedCase: DiagnosisCase = {
  id: "dependency-failed",
  codes: ["dependency-failed"],
  diagnose: (ctx) => (ctx.unit.activeState === "failed" || ctx.unit.activeState === "inactive" ? dependencyFailure(ctx) : null),
};

function dependencyFailure(ctx: DiagnosisContext): Diagnosis | null {
  const u = ctx.unit;
  const line = lastDependencyFailure(ctx.facts.journal);
  const job = [...(ctx.facts.recentJobs ?? [])].reverse().find((j) => j.unit === ctx.name && j.phase === "finished" && j.result === "dependency");
  const lineMs = line ? line.atUsec / 1000 : null;
  const jobMs = job ? job.atMs : null;
  const atMs = lineMs !== null && jobMs !== null ? Math.max(lineMs, jobMs) : (lineMs ?? jobMs);
  if (atMs === null) return null;
  // Only if nothing started since: a later start supersedes the old cancelled job.
  const lastStart = lastTransitionInto(ctx.transitions, (to) => to.activeState === "activating" || to.activeState === "active");
  const startedMs = Math.max(lastStart ? lastStart.atUsec / 1000 : 0, usecToMs(u.timestamps.inactiveExitUsec) ?? 0);
  if (startedMs > atMs) return null;
  const evidence: Evidence[] = [stateEvidence(ctx)];
  if (job) evidence.push({ label: "Start job", value: `#${job.jobId} ${job.jobType} finished with result "dependency"`, source: "systemd" });
  if (line) evidence.push(...logEvidence([line]));
  const notStarted = `Not started ${formatDurationWords(ctx.now - atMs)} ago because`;
  const generic: Diagnosis = {
    severity: "critical",
    code: "dependency-failed",
    headline: `${notStarted} a unit it requires failed to start (job result "dependency"); the problem is in that unit, not in this one.`,
    evidence,
    nextStep: { text: "Check the units this one Requires=/BindsTo= (`systemctl list-dependencies`), fix the failed one, then start this one." },
  };

  const checked = ctx.facts.dependencies;
  if (!checked || checked.length === 0) return generic;
  const problems = checked.map(dependencyProblem).filter((p): p is DependencyProblem => p !== null);
  const serious = problems.filter((p) => p.serious);
  const culprits = serious.length > 0 ? serious : problems;
  const unchecked = u.requires.filter((name) => !checked.some((d) => d.name === name));
  const others = checked.filter((d) => !culprits.some((c) => c.dep === d));
  evidence.push(...culprits.map((c) => ({ label: "Requires", value: dependencyValue(c.dep), source: "systemd" as const })));
  if (others.length > 0) {
    evidence.push({
      label: "Other required units",
      value: listWithMore(
        others.map((d) => `${d.name} is ${formatState(d)}`),
        6,
      ),
      source: "systemd",
    });
  }
  if (unchecked.length > 0) evidence.push({ label: "Not checked", value: listWithMore(unchecked, 6), source: "gpudeck" });

  if (culprits.length === 0) {
    // Every unit it requires is fine now: the failed one recovered (or was reset) since.
    if (unchecked.length > 0) return generic;
    return {
      ...generic,
      severity: "warning",
      headline: `${notStarted} a unit it requires failed to start (job result "dependency"); the units it requires are up now (${listWithMore(
        checked.map((d) => d.name),
        3,
      )}), so starting it again should work.`,
      nextStep: { text: "Start it again.", action: { kind: "start", unit: ctx.name } },
    };
  }
  const first = culprits[0].dep;
  const headline =
    culprits.length === 1
      ? `${notStarted} ${first.name}, which it requires, ${culprits[0].phrase}; the problem is in that unit, not in this one.`
      : `${notStarted} units it requires cannot run: ${listWithMore(
          culprits.map((c) => `${c.dep.name} ${c.phrase}`),
          3,
        )}; the problem is in those units, not in this one.`;
  // Only units in the allow-list get a button: reading a dependency's state never widens what
  // the panel may act on.
  const nextStep: NextStep = first.manageable
    ? {
        text: `Open ${first.name}, fix why it ${culprits[0].serious ? "failed" : "is not running"}, then start this one again.`,
        action: { kind: "open-unit", unit: first.name },
      }
    : {
        text: `Check ${first.name} with \`systemctl status ${first.name}\` and \`journalctl -u ${first.name}\` (it is not among this agent's units), fix it, then start this one again.`,
      };
  return { ...generic, headline, nextStep };
}

interface DependencyProblem {
  dep: DependencyState;
  /** failed or cannot load, rather than merely not running */
  serious: boolean;
  /** completes "<name> …" */
  phrase: string;
}

const DEPENDENCY_LOAD_PROBLEMS: Record<string, string> = {
  "not-found": "does not exist (LoadState=not-found)",
  masked: "is masked",
  "bad-setting": "has an invalid unit file (LoadState=bad-setting)",
  error: "could not be loaded (LoadState=error)",
};

/** How a required unit stands in the way now; null when it does not (active, starting …). */
function dependencyProblem(dep: DependencyState): DependencyProblem | null {
  const load = DEPENDENCY_LOAD_PROBLEMS[dep.loadState];
  if (load) return { dep, serious: true, phrase: load };
  if (dep.activeState === "failed") {
    return { dep, serious: true, phrase: dep.result && dep.result !== "success" ? `failed (result ${dep.result})` : "failed" };
  }
  if (dep.activeState === "inactive" || dep.activeState === "deactivating") {
    return { dep, serious: false, phrase: `is ${formatState(dep)}` };
  }
  return null;
}

function dependencyValue(dep: DependencyState): string {
  const parts = [`${dep.name}: ${formatState(dep)}`];
  if (dep.result && dep.result !== "success") parts.push(`result ${dep.result}`);
  if (dep.loadState && dep.loadState !== "loaded") parts.push(`LoadState=${dep.loadState}`);
  if (!dep.manageable) parts.push("not among this agent's units");
  return parts.join(", ");
}

/** "a, b and c" / "a, b, c and 4 more" */
function listWithMore(items: readonly string[], max: number): string {
  const shown = items.slice(0, max);
  const more = items.length - shown.length;
  if (more > 0) return `${shown.join(", ")} and ${more} more`;
  return shown.length <= 1 ? shown.join("") : `${shown.slice(0, -1).join(", ")} and ${shown[shown.length - 1]}`;
}
