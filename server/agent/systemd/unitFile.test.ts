import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactDeep } from "../../contract/redact";
import { effectiveLines, readBoundedText, unitFileFromProps, unitFileWord, UNIT_FILE_MAX_BYTES } from "./unitFile";

let dir = "";
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "gpudeck-unitfile-"));
  await writeFile(path.join(dir, "vllm-a.service"), "[Service]\nExecStart=/opt/vllm/bin/vllm serve /m --api-key sk-live\nEnvironment=HF_TOKEN=hf_live\n");
  await writeFile(path.join(dir, "override.conf"), '[Service]\nEnvironment="A=1" "OPENAI_API_KEY=sk-drop"\n');
  await writeFile(path.join(dir, "huge.conf"), "#".repeat(UNIT_FILE_MAX_BYTES + 1));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const props = () => ({
  FragmentPath: path.join(dir, "vllm-a.service"),
  DropInPaths: [path.join(dir, "override.conf"), path.join(dir, "huge.conf"), path.join(dir, "gone.conf")],
  NeedDaemonReload: true,
  ExecStart: [
    ["/opt/vllm/bin/vllm", ["/opt/vllm/bin/vllm", "serve", "/m", "--api-key", "sk-live", "--served-model-name", "my model"], false, 0, 0, 0, 0, 0, 0, 0],
  ],
  Environment: ["HF_TOKEN=hf_live", "A=1", "NOTE=two words"],
  EnvironmentFiles: [["/etc/gpudeck/engine.env", true]],
});

describe("units.file from D-Bus properties", () => {
  it("fragment, drop-ins (a too-big or missing one named as a problem), NeedDaemonReload, effective lines", async () => {
    const f = await unitFileFromProps(props());
    expect(f.fragmentPath).toBe(path.join(dir, "vllm-a.service"));
    expect(f.fragment).toContain("ExecStart=/opt/vllm/bin/vllm serve");
    expect(f.dropIns.map((d) => d.text === null)).toEqual([false, true, true]);
    expect(f.problems.join("\n")).toMatch(/huge\.conf: .*more than the 262144 shown/);
    expect(f.problems.join("\n")).toMatch(/gone\.conf: .*ENOENT/);
    expect(f.needDaemonReload).toBe(true);
    expect(f.effective).toEqual([
      'ExecStart=/opt/vllm/bin/vllm serve /m --api-key sk-live --served-model-name "my model"',
      "Environment=HF_TOKEN=hf_live",
      "Environment=A=1",
      'Environment="NOTE=two words"',
      "EnvironmentFile=-/etc/gpudeck/engine.env",
    ]);
  });

  it("as the agent sends it (its output redaction): no secret left, EnvironmentFile= only named", async () => {
    const out = JSON.stringify(redactDeep(await unitFileFromProps(props())));
    expect(out).not.toMatch(/sk-live|hf_live|sk-drop/);
    expect(out).toContain("EnvironmentFile=-/etc/gpudeck/engine.env");
    expect(out).toContain('\\"A=1\\"');
  });

  it("a unit without a fragment; words quoted as systemd would; ExecStart with another argv[0]", async () => {
    const f = await unitFileFromProps({ FragmentPath: "", NeedDaemonReload: false });
    expect(f).toMatchObject({ fragmentPath: "", fragment: null, dropIns: [], needDaemonReload: false, effective: [] });
    expect(unitFileWord('say "hi"')).toBe('"say \\"hi\\""');
    expect(effectiveLines({ ExecStart: [["/usr/bin/python3", ["python", "-m", "x"], true]] })).toEqual(["ExecStart=-@/usr/bin/python3 python -m x"]);
    await expect(readBoundedText("relative/path")).rejects.toThrow(/absolute/);
  });
});
