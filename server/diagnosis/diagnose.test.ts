import { describe, expect, it } from "vitest";
import { DIAGNOSIS_CODES, diagnose } from "./diagnose";
import { ago, cmd, evidence, facts, incidentFacts, proc, startPreUnit, transitions, unit, usec } from "./fixtures";

describe("API", () => {
  it("every code returned is one of the stable DIAGNOSIS_CODES", () => {
    expect(DIAGNOSIS_CODES).toContain(diagnose(incidentFacts()).code);
    expect(new Set(DIAGNOSIS_CODES).size).toBe(DIAGNOSIS_CODES.length);
  });

  it("does not mutate its input", () => {
    const f = incidentFacts();
    const before = JSON.stringify(f);
    diagnose(f);
    expect(JSON.stringify(f)).toBe(before);
  });

  it("is deterministic: same facts, same diagnosis", () => {
    expect(diagnose(incidentFacts())).toEqual(diagnose(incidentFacts()));
  });
});

// ---------------------------------------------------------------------------------------
describe("other states", () => {
  // Seen on systemd 252 (e2e/diagnosis): a child systemd has forked but not yet exec'd shows
  // systemd's own argv area, rewritten to "(sleep)" and padded with empty strings.
  const preExec = ["(sleep)", ...Array.from({ length: 40 }, () => "")];

  it("a control process caught before its exec: the ExecStartPre line from the unit file", () => {
    const u = startPreUnit(0.2, {
      execStartPre: [cmd("/bin/sleep", "30")],
      controlProcess: proc(5210, preExec, { startedAtMs: ago(0.2) }),
      processes: [proc(5210, preExec, { startedAtMs: ago(0.2) })],
    });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-pre-running");
    expect(d.headline).toMatch(/^ExecStartPre running for <1 s: `\/bin\/sleep 30` — TimeoutStartSec in 2 min\.$/);
    expect(evidence(d, "ExecStartPre")).toEqual({ label: "ExecStartPre", value: "PID 5210, running <1 s: /bin/sleep 30", source: "systemd" });
  });

  it("a main process caught before its exec", () => {
    const d = diagnose(facts({ unit: unit({ mainProcess: proc(4121, preExec) }) }));
    expect(evidence(d, "Main process")?.value).toBe("PID 4121 (sleeping): (sleep) (being spawned by systemd)");
  });

  it("activating/start: waiting for readiness", () => {
    const u = unit({ activeState: "activating", subState: "start", stateChangeUsec: usec(ago(25)) });
    const d = diagnose(facts({ unit: u }));
    expect(d.code).toBe("start-running");
    expect(d.headline).toBe("Started for 25 s: waiting for PID 4121 to report ready (Type=notify/forking) — TimeoutStartSec in 1 min 35 s.");
    expect(d.etaMs).toBe(95_000);
  });

  it("ignores transitions of other units", () => {
    const other = transitions("active/running", [[ago(5), "failed/failed", { result: "exit-code", inRestartCycle: true }]], "other.service");
    expect(diagnose(facts({ recentTransitions: other })).code).toBe("healthy");
  });
});
