import { describe, expect, it } from "vitest";
import { UNIT_ACTIONS, type UnitSummary } from "@/server/contract/types";
import {
  actionButtonClass,
  answeredStatus,
  asksConfirmation,
  isApplicable,
  progressPhase,
  progressTone,
  refusedStatus,
  refusedSummary,
  repeatGuarded,
  sendingStatus,
  showsButton,
  type ActionPermissions,
  type ProgressPhase,
} from "./unitActions";

function unit(extra: Partial<UnitSummary> = {}): UnitSummary {
  return {
    name: "vllm.service",
    description: "vLLM",
    activeState: "active",
    subState: "running",
    loadState: "loaded",
    unitFileState: "enabled",
    result: "success",
    mainPid: 4242,
    controlPid: 0,
    nRestarts: 0,
    stateChangeUsec: 0,
    job: null,
    ...extra,
  };
}

const allowed = { allowed: true } as const;
const operator: ActionPermissions = {
  start: allowed,
  stop: allowed,
  restart: allowed,
  "reset-failed": allowed,
  kill: { allowed: false, reason: "admins only" },
};

describe("isApplicable", () => {
  it("offers stop, restart and kill to a running unit, not start or reset-failed", () => {
    const u = unit();
    expect(UNIT_ACTIONS.filter((a) => isApplicable(a, u))).toEqual(["stop", "restart", "kill"]);
  });

  it("offers start, restart and reset-failed to a failed unit without a main process", () => {
    const u = unit({ activeState: "failed", subState: "failed", result: "exit-code", mainPid: 0 });
    expect(UNIT_ACTIONS.filter((a) => isApplicable(a, u))).toEqual(["start", "restart", "reset-failed"]);
  });

  it("stops a unit that is still activating (start-pre), and cannot start it again", () => {
    const u = unit({ activeState: "activating", subState: "start-pre", mainPid: 0, controlPid: 77 });
    expect(isApplicable("stop", u)).toBe(true);
    expect(isApplicable("start", u)).toBe(false);
    expect(isApplicable("kill", u)).toBe(false);
  });

  it("offers reset-failed after automatic restarts or a bad result even when not failed", () => {
    expect(isApplicable("reset-failed", unit({ nRestarts: 3 }))).toBe(true);
    expect(isApplicable("reset-failed", unit({ activeState: "inactive", subState: "dead", result: "signal", mainPid: 0 }))).toBe(true);
    expect(isApplicable("reset-failed", unit({ activeState: "inactive", subState: "dead", mainPid: 0 }))).toBe(false);
  });
});

describe("showsButton", () => {
  it("needs both the permission and an applicable state", () => {
    expect(showsButton("restart", allowed, unit())).toBe(true);
    expect(showsButton("kill", operator.kill, unit())).toBe(false);
    expect(showsButton("start", allowed, unit())).toBe(false);
    expect(showsButton("restart", undefined, unit())).toBe(false); // units.get has not answered yet
  });
});

describe("refusedSummary", () => {
  it("lists each refused action with its reason, in button order", () => {
    expect(refusedSummary(operator)).toBe("Kill (SIGKILL): admins only");
    const viewer = Object.fromEntries(UNIT_ACTIONS.map((a) => [a, { allowed: false, reason: "viewers cannot change units" }])) as ActionPermissions;
    expect(refusedSummary(viewer)).toBe(
      "Start: viewers cannot change units · Stop: viewers cannot change units · Restart: viewers cannot change units · Reset failed: viewers cannot change units · Kill (SIGKILL): viewers cannot change units",
    );
  });

  it("is empty when nothing is refused or permissions are unknown", () => {
    expect(refusedSummary({ ...operator, kill: allowed })).toBeNull();
    expect(refusedSummary(undefined)).toBeNull();
  });
});

describe("confirmation", () => {
  it("asks before stop, restart and kill; start and reset-failed run at once", () => {
    expect(UNIT_ACTIONS.filter(asksConfirmation)).toEqual(["stop", "restart", "kill"]);
  });

  it("sends a restart or stop confirmed when someone just did one (the dialog showed it)", () => {
    const recent = { user: "ada", action: "restart", atMs: 1 };
    expect(repeatGuarded("restart", recent)).toBe(true);
    expect(repeatGuarded("stop", recent)).toBe(true);
    expect(repeatGuarded("kill", recent)).toBe(false);
    expect(repeatGuarded("restart", null)).toBe(false);
  });
});

describe("action status", () => {
  it("goes sending → running → finished with the job's result", () => {
    expect(progressPhase(sendingStatus("restart", 1), undefined)).toBe("sending");
    const answered = answeredStatus("restart", 12, 2);
    expect(answered).toEqual({ action: "restart", sent: true, jobId: 12, atMs: 2 });
    expect(progressPhase(answered, undefined)).toBe("running");
    expect(progressPhase(answered, { phase: "running" })).toBe("running");
    expect(progressPhase(answered, { phase: "finished", result: "done" })).toBe("done");
    expect(progressPhase(answered, { phase: "finished", result: "failed" })).toBe("failed");
  });

  it("is 'sent' for an action without a job (reset-failed)", () => {
    expect(progressPhase(answeredStatus("reset-failed", null, 2), undefined)).toBe("sent");
  });

  it("turns a CONFLICT into a prompt to confirm again, keeping the reason first given", () => {
    const s = refusedStatus("restart", { message: "Confirmation required: ada restarted it 10 s ago.", data: { code: "CONFLICT" } }, "INC-1", 3);
    expect(s.needsConfirmation).toEqual({ reason: "INC-1" });
    expect(s.error).toBe("Confirmation required: ada restarted it 10 s ago.");
    expect(progressPhase(s, undefined)).toBe("confirm-again");
  });

  it("offers no 'anyway' for a conflict a confirmation cannot override", () => {
    for (const message of [
      "vllm-kimi-k25.service already has a GPU-aware restart running (operation 7, waiting-for-gpus); cancel it or wait for it.",
      "Not killed: the process is not on that GPU.",
    ]) {
      const s = refusedStatus("restart", { message, data: { code: "CONFLICT" } }, "INC-1", 3, true);
      expect(s.needsConfirmation, message).toBeUndefined();
      expect(progressPhase(s, undefined)).toBe("refused");
    }
  });

  it("shows any other refusal as refused, with nothing to repeat", () => {
    for (const data of [{ code: "FORBIDDEN" }, null, undefined]) {
      const s = refusedStatus("kill", { message: "Not allowed: admins only.", data }, "", 3);
      expect(s.needsConfirmation).toBeUndefined();
      expect(progressPhase(s, undefined)).toBe("refused");
    }
  });

  it("is red for refusals and failures, green when done, amber under way", () => {
    const phases: ProgressPhase[] = ["confirm-again", "refused", "failed", "done", "sending", "sent", "running"];
    expect(phases.map(progressTone)).toEqual(["bad", "bad", "bad", "ok", "busy", "busy", "busy"]);
  });
});

describe("actionButtonClass", () => {
  it("marks stop and kill as dangerous and restart as the primary action", () => {
    expect(actionButtonClass("kill")).toContain("text-red-800");
    expect(actionButtonClass("stop")).toContain("text-red-800");
    expect(actionButtonClass("restart")).toContain("bg-blue-700");
    expect(actionButtonClass("start")).toContain("border-zinc-300");
  });
});
