import { describe, expect, it } from "vitest";
import type { ExecResult, Identity, Runner } from "../types";
import { checkJournal } from "./journal";

function runner(result: Partial<ExecResult>, calls: string[][] = []): Runner {
  return {
    run: async (file, args) => {
      calls.push([file, ...args]);
      return { code: 0, stdout: "", stderr: "", timedOut: false, ms: 3, ...result };
    },
  };
}

const agentUser: Identity = { uid: 998, groups: ["gpudeck", "systemd-journal"], pid: 1 };

describe("journal", () => {
  it("passes: journalctl reads the unit's log (asked for that unit, one line)", async () => {
    const calls: string[][] = [];
    expect(await checkJournal(runner({}, calls), "journalctl", agentUser, "vllm-a.service")).toEqual({
      id: "journal",
      status: "ok",
      detail: "journalctl reads vllm-a.service's log",
    });
    expect(calls[0]).toEqual(["journalctl", "--no-pager", "--quiet", "--lines=1", "--output=cat", "--unit=vllm-a.service"]);
  });

  it("fails: this user would see only its own messages", async () => {
    const r = await checkJournal(runner({}), "journalctl", { uid: 998, groups: ["gpudeck"], pid: 1 }, "vllm-a.service");
    expect(r.status).toBe("error");
    expect(r.fix).toContain("SupplementaryGroups=systemd-journal");
  });

  it("fails: journalctl missing, failing or hanging", async () => {
    expect((await checkJournal(runner({ code: null, spawnError: "ENOENT (spawn journalctl ENOENT)" }), "journalctl", agentUser, undefined)).detail).toBe(
      "journalctl cannot be run: ENOENT (spawn journalctl ENOENT)",
    );
    expect((await checkJournal(runner({ code: 1, stderr: "Failed to open journal: Permission denied" }), "journalctl", agentUser, undefined)).detail).toBe(
      "journalctl exited 1: Failed to open journal: Permission denied",
    );
    expect((await checkJournal(runner({ code: null, timedOut: true }), "journalctl", agentUser, undefined)).status).toBe("error");
  });
});
