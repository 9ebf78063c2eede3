/** The doctor as a whole: which checks run for which config, what it prints, how it exits. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FAKE_NVIDIA_SMI_PATH, FakeNvidiaSmiStateFile, fakeGpu } from "@/e2e/fakes/fakeNvidiaSmi";
import { runDoctorCli } from "./cli";
import type { DoctorDeps } from "./doctor";
import { systemFiles, systemRunner } from "./system";
import type { SystemdProbe } from "./types";

const dir = mkdtempSync(path.join(tmpdir(), "gpudeck-doctor-"));
const smi = new FakeNvidiaSmiStateFile({ gpus: [fakeGpu(0)], allocations: [] }, dir);

function deps(over: Partial<DoctorDeps> = {}): DoctorDeps {
  const probe: SystemdProbe = {
    address: "unix:path=/test/bus",
    version: async () => "252",
    unitsMatching: async (globs) => (globs.some((g) => g.startsWith("vllm")) ? ["vllm-a.service"] : []),
    serviceUser: async () => null,
    close: async () => undefined,
  };
  return {
    env: { FAKE_NVIDIA_SMI_STATE: smi.path },
    runner: {
      run: (file, args, opts) =>
        file === "journalctl" || file === "pkcheck"
          ? Promise.resolve({ code: 0, stdout: "", stderr: "", timedOut: false, ms: 1 })
          : systemRunner.run(file, args, { ...opts, env: { ...process.env, FAKE_NVIDIA_SMI_STATE: smi.path } as Record<string, string> }),
    },
    systemd: () => probe,
    files: systemFiles,
    http: async () => Promise.reject(Object.assign(new Error("fetch failed"), { cause: { code: "ECONNREFUSED" } })),
    httpForTls: () => async () => Promise.reject(new Error("no TLS here")),
    identity: { uid: 0, groups: ["root"], pid: 1 },
    withProcessOf: (_user, fn) => fn(4242),
    ...over,
  };
}

function config(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text, { mode: 0o644 });
  return file;
}

async function run(argv: string[], d: DoctorDeps): Promise<{ code: number; out: string }> {
  let out = "";
  const sink = { write: (s: string) => ((out += s), true) } as unknown as NodeJS.WritableStream;
  const code = await runDoctorCli(argv, { stdout: sink, stderr: sink }, d);
  return { code, out };
}

describe("gpudeck doctor", () => {
  const agentOnly = config("agent.toml", `[agent]\nunits = ["vllm-*.service"]\nnvidia_smi = "${FAKE_NVIDIA_SMI_PATH}"\ndata_dir = "${dir}/agent"\n`);

  it("a healthy agent host: every agent check passes, exit 0, panel checks not run for an [agent]-only file", async () => {
    const { code, out } = await run(["--config", agentOnly], deps());
    expect(out).toMatch(/^gpudeck doctor: agent checks, config .*agent\.toml\n/);
    for (const id of ["config file", "system bus", "units", "unit control", "nvidia-smi", "persistence mode", "journal", "agent data dir"])
      expect(out).toMatch(new RegExp(`^ok +${id} `, "m"));
    expect(out).not.toContain("panel");
    expect(out).toMatch(/^0 errors, 0 warnings, \d+ ok$/m);
    expect(code).toBe(0);
  });

  it("errors make it exit 1 and say how to fix each", async () => {
    const bad = config("bad-units.toml", `[agent]\nunits = ["sglang-*.service"]\nnvidia_smi = "/nonexistent/nvidia-smi"\ndata_dir = "${dir}/agent"\n`);
    const { code, out } = await run(["--config", bad], deps());
    expect(out).toMatch(/^ERROR +units +no unit matches "sglang-\*\.service"$/m);
    expect(out).toMatch(/^ERROR +nvidia-smi +\/nonexistent\/nvidia-smi cannot be run: ENOENT/m);
    expect(out).toMatch(/^ +fix: install the NVIDIA driver utilities/m);
    expect(out).toMatch(/^2 errors, /m);
    expect(code).toBe(1);
  });

  it("a config error stops the checks with the key and line", async () => {
    const typo = config("typo.toml", `[agent]\nunits = ["vllm-*.service"]\nlisen = "0.0.0.0:9300"\n`);
    const { code, out } = await run(["--config", typo], deps());
    expect(out).toContain(`ERROR  config file  ${typo}:3: agent.lisen: unknown key; did you mean "listen"?`);
    expect(code).toBe(1);
  });

  it("a loader's error on a file value names where it came from", async () => {
    const listen = config("listen.toml", `[agent]\nunits = ["vllm-*.service"]\nlisten = "everywhere"\n`);
    const { out } = await run(["--config", listen, "--agent"], deps());
    expect(out).toContain(`(GPUDECK_AGENT_LISTEN comes from agent.listen in ${listen}:3)`);
  });

  it("panel checks for a panel file: each agent's reachability", async () => {
    const panel = config(
      "panel.toml",
      `[panel]\ndata_dir = "${dir}/panel"\n\n[[hosts]]\nname = "gpu-a"\nurl = "http://127.0.0.1:9"\ntoken = "${"t".repeat(40)}"\n`,
    );
    const { code, out } = await run(["--config", panel], deps());
    expect(out).toMatch(/^gpudeck doctor: panel checks/);
    expect(out).toMatch(/^ERROR +agent gpu-a +cannot reach http:\/\/127\.0\.0\.1:9: ECONNREFUSED$/m);
    // the inline token makes a world-readable file an error too
    expect(out).toMatch(/^ERROR +config secrets +.*panel\.toml is readable by every user \(mode 0644\) and holds hosts\[0\]\.token$/m);
    expect(code).toBe(1);
  });

  it("without the system bus, unit checks are skipped, not passed", async () => {
    const noBus: SystemdProbe = {
      address: "unix:path=/nowhere",
      version: () => Promise.reject(new Error("ENOENT")),
      unitsMatching: async () => [],
      serviceUser: async () => null,
      close: async () => undefined,
    };
    const { out } = await run(["--config", agentOnly], deps({ systemd: () => noBus }));
    expect(out).toMatch(/^ERROR +system bus /m);
    expect(out).toMatch(/^skip +units +needs the system bus$/m);
  });

  it("the agent's TLS: plain HTTP passes on loopback, warns on a network address, and a TLS pair is checked", async () => {
    expect((await run(["--config", agentOnly], deps())).out).toMatch(/^ok +TLS \(agent\) +plain HTTP on 127\.0\.0\.1 \(loopback only\)$/m);
    const open = config(
      "open.toml",
      `[agent]\nunits = ["vllm-*.service"]\nlisten = "0.0.0.0:9300"\nnvidia_smi = "${FAKE_NVIDIA_SMI_PATH}"\ndata_dir = "${dir}/agent"\n`,
    );
    const openOut = (await run(["--config", open], deps())).out;
    expect(openOut).toMatch(/^ERROR +TLS \(agent\) +the agent would serve plain HTTP on 0\.0\.0\.0:9300, off loopback: .*GPUDECK_AGENT_INSECURE_HTTP=1/m);
    const wanted = deps();
    wanted.env = { ...wanted.env, GPUDECK_AGENT_INSECURE_HTTP: "1" };
    const wantedOut = (await run(["--config", open], wanted)).out;
    expect(wantedOut).toMatch(
      /^WARN +TLS \(agent\) +the agent listens on 0\.0\.0\.0 over plain HTTP \(GPUDECK_AGENT_INSECURE_HTTP=1\): its bearer token travels in clear$/m,
    );
    const tls = config(
      "tls.toml",
      `[agent]\nunits = ["vllm-*.service"]\nlisten = "0.0.0.0:9300"\ntls_cert = "missing.crt"\ntls_key = "missing.key"\nnvidia_smi = "${FAKE_NVIDIA_SMI_PATH}"\ndata_dir = "${dir}/agent"\n`,
    );
    const tlsRun = await run(["--config", tls], deps());
    expect(tlsRun.out).toMatch(/^ERROR +TLS \(agent\) +cannot read the certificate .*missing\.crt: ENOENT$/m);
    expect(tlsRun.code).toBe(1);
  });

  it("bad usage exits 2", async () => {
    expect((await run(["--frobnicate"], deps())).code).toBe(2);
  });
});
