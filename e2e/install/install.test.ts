/**
 * gpudeck installed on a host the way the README says, in a real systemd 252 (namespace sandbox):
 * the packed tarball under /opt/gpudeck-<version> (/opt/gpudeck links to it), deploy/'s units, sysusers file, polkit rule and example
 * config as shipped. The units pass systemd-analyze verify; the agent runs as the unprivileged
 * user gpudeck and, through the polkit rule, starts a unit the rule lists and is refused one it
 * does not (nor a template instance its vllm-*.service would cover with '*' matching '@'); the panel runs as a dynamic user and answers over HTTP, and `gpudeck user` as root
 * keeps its database its own; doctor passes, and fails on a unit polkit refuses and on a glob
 * that matches nothing; the root drop-in lets the agent manage any unit it shows.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, type AgentClient } from "../../server/panel/agentClient";
import { Sandbox, warnIfUnsupported } from "../sandbox/sandbox";
import { freePort, REPO_ROOT, sleep } from "../systemd/agentHarness";
import { GPUDECK_BIN, deployFile, installPackage, packTarball } from "./installHarness";

const skip = warnIfUnsupported("install from the packed tarball (e2e/install/install.test.ts)");
const log = (msg: string) => console.log(`[install] ${msg}`);

const FAKE_STATE_DIR = "/run/gpudeck-e2e";
const FAKE_STATE = `${FAKE_STATE_DIR}/fake-nvidia-smi.json`;
const ALLOWED = "vllm-e2e.service"; // the shipped polkit rule lists vllm-*.service
const REFUSED = "other-e2e.service"; // the agent shows it, the rule does not list it

describe.skipIf(skip)("installed gpudeck under real systemd", () => {
  let sb: Sandbox;
  let agentPort = 0;
  let panelPort = 0;
  let agent: AgentClient;
  const token = randomBytes(32).toString("base64url");

  const sh = async (argv: string[], timeoutMs = 30_000) => sb.exec(argv, { timeoutMs });
  const systemctl = (...args: string[]) => sb.systemctl(args, { timeoutMs: 30_000 });
  const userOf = async (unit: string) => {
    const pid = (await systemctl("show", "-P", "MainPID", unit)).stdout.trim();
    return (await sh(["ps", "-o", "user=", "-p", pid])).stdout.trim();
  };

  async function waitHttp(url: string, what: string, timeoutMs: number): Promise<Response> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await fetch(url, { redirect: "manual" }).catch(() => null);
      if (res && res.status < 500) return res;
      if (Date.now() > deadline) {
        const journal = await sh(["journalctl", "--no-pager", "-n", "60", "-u", "gpudeck-agent.service", "-u", "gpudeck-panel.service"]);
        throw new Error(`${what} did not answer at ${url} within ${timeoutMs} ms\n${journal.stdout}`);
      }
      await sleep(200);
    }
  }

  let tarball = "";

  beforeAll(async () => {
    const t0 = Date.now();
    tarball = await packTarball(log);
    sb = await Sandbox.boot({ name: "install" });
    await installPackage(sb, tarball);
    log(`packed, booted and installed in ${Date.now() - t0} ms`);

    // the README's steps: user, polkit rule (and polkit itself: the sandbox masks it), config, token, units
    await sb.writeFile("/etc/sysusers.d/gpudeck.conf", deployFile("sysusers.d/gpudeck.conf"));
    expect((await sh(["systemd-sysusers"])).code).toBe(0);
    await sb.removeFile("/etc/systemd/system/polkit.service");
    await sb.writeFile("/etc/polkit-1/rules.d/50-gpudeck.rules", deployFile("polkit/50-gpudeck.rules"));
    agentPort = await freePort();
    panelPort = await freePort();
    const example = deployFile("gpudeck.example.toml");
    const config = example
      .replace(/^units = .*$/m, `units = ["vllm-e2e*.service", "${REFUSED}"]`)
      .replace(/^listen = "127\.0\.0\.1:9300"$/m, `listen = "127.0.0.1:${agentPort}"`)
      .replace(/^listen = "127\.0\.0\.1:3000"$/m, `listen = "127.0.0.1:${panelPort}"`)
      .replace(/^public_url = .*$/m, "")
      .replace(/^url = "http:\/\/127\.0\.0\.1:9300"$/m, `url = "http://127.0.0.1:${agentPort}"`)
      .replace(/\[\[hosts\]\]\nname = "gpu-b"[^[]*/, "");
    expect(config).not.toBe(example);
    await sb.writeFile("/etc/gpudeck/gpudeck.toml", config, "0644");
    await sb.writeFile("/etc/gpudeck/agent.env", `GPUDECK_AGENT_TOKEN=${token}\n`, "0600");
    for (const unit of ["gpudeck-agent.service", "gpudeck-panel.service"]) await sb.writeFile(`/etc/systemd/system/${unit}`, deployFile(unit));

    // the test host's GPUs: the fake nvidia-smi on PATH, its state where the agent may write its lock
    await sb.writeFile("/usr/local/bin/nvidia-smi", readFileSync(path.join(REPO_ROOT, "e2e/fakes/nvidia-smi")), "0755");
    await sh(["install", "-d", "-m", "0777", FAKE_STATE_DIR]);
    await sb.writeFile(FAKE_STATE, JSON.stringify({ gpus: [{ uuid: "GPU-e2e-0", index: 0, memoryTotalMiB: 81920, baseUsedMiB: 0 }], allocations: [] }), "0666");
    await sb.writeFile(
      "/etc/systemd/system/gpudeck-agent.service.d/e2e-fake-gpu.conf",
      `[Service]\nEnvironment=FAKE_NVIDIA_SMI_STATE=${FAKE_STATE}\nReadWritePaths=${FAKE_STATE_DIR}\n`,
    );
    for (const unit of [ALLOWED, REFUSED]) await sb.writeFile(`/etc/systemd/system/${unit}`, "[Service]\nExecStart=/bin/sleep infinity\n");
    await systemctl("daemon-reload");
    agent = createAgentClient({ url: `http://127.0.0.1:${agentPort}`, token });
  }, 600_000);

  afterAll(async () => {
    await sb?.stop();
    if (tarball) rmSync(path.dirname(tarball), { recursive: true, force: true });
  });

  it("the units pass systemd-analyze verify with the installed paths", async () => {
    const r = await sh(["systemd-analyze", "verify", "/etc/systemd/system/gpudeck-agent.service", "/etc/systemd/system/gpudeck-panel.service"]);
    expect(`${r.stdout}${r.stderr}`.split("\n").filter((l) => /gpudeck/.test(l))).toEqual([]);
    expect(r.code).toBe(0);
  });

  it("the agent starts as the unprivileged user gpudeck and serves", async () => {
    await systemctl("start", "gpudeck-agent.service");
    const health = await waitHttp(`http://127.0.0.1:${agentPort}/healthz`, "the agent", 30_000);
    expect(await health.json()).toMatchObject({ ok: true, systemd: "ok" });
    expect(await userOf("gpudeck-agent.service")).toBe("gpudeck");
    // its node process too, not only the launcher
    const users = (await sh(["ps", "-o", "user=,args=", "-C", "node"])).stdout;
    expect(users).toMatch(/^gpudeck +\S*node .*server\/agent\/main\.ts/m);
  });

  it("through the polkit rule it starts a unit the rule lists, and systemd refuses one it does not", async () => {
    const { jobId } = await agent.units.start.mutate({ name: ALLOWED });
    expect(jobId).toBeGreaterThan(0);
    const deadline = Date.now() + 15_000;
    while ((await sh(["systemctl", "is-active", ALLOWED])).stdout.trim() !== "active") {
      if (Date.now() > deadline) throw new Error(`${ALLOWED} did not become active`);
      await sleep(100);
    }
    await expect(agent.units.start.mutate({ name: REFUSED })).rejects.toThrow(`systemd refused start of ${REFUSED}: Interactive authentication required.`);
    expect((await sh(["systemctl", "is-active", REFUSED])).stdout.trim()).toBe("inactive");
    // the rest of what the agent asks for, on the allowed unit
    await agent.units.restart.mutate({ name: ALLOWED });
    await agent.units.kill.mutate({ name: ALLOWED });
    await agent.units.resetFailed.mutate({ name: ALLOWED });
    await agent.units.stop.mutate({ name: ALLOWED });
  });

  it("the polkit rule's vllm-*.service does not cover a template instance (a name with '@'), as the agent's allow-list does not", async () => {
    await sb.writeFile("/etc/systemd/system/vllm-e2e@.service", "[Service]\nExecStart=/bin/sleep infinity\n");
    await systemctl("daemon-reload");
    const asGpudeck = (verb: string, unit: string) =>
      sh(["systemd-run", "--quiet", "--wait", "--pipe", "-p", "User=gpudeck", "systemctl", "--no-ask-password", verb, unit]);
    const instance = await asGpudeck("start", "vllm-e2e@--anything.service");
    expect(instance.code, instance.stdout + instance.stderr).not.toBe(0);
    expect(instance.stderr).toMatch(/Interactive authentication required|Access denied/);
    expect((await sh(["systemctl", "is-active", "vllm-e2e@--anything.service"])).stdout.trim()).not.toBe("active");
    // the same user, the same way, on a unit the rule lists: granted
    const plain = await asGpudeck("restart", ALLOWED);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    await systemctl("stop", ALLOWED);
  });

  it("the panel starts as a dynamic user and answers over HTTP", async () => {
    await systemctl("start", "gpudeck-panel.service");
    const login = await waitHttp(`http://127.0.0.1:${panelPort}/login`, "the panel", 60_000);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain("</html>");
    const user = await userOf("gpudeck-panel.service");
    expect(user).not.toBe("root");
    expect(user).not.toBe("gpudeck");
    // its state directory is its own; the installed package stays read-only to it
    expect((await sh(["stat", "-c", "%U %a", "/var/lib/private/gpudeck-panel"])).stdout.trim()).toMatch(/ 700$/);
    expect((await sh(["ls", "/var/lib/gpudeck-panel/"])).stdout).toContain("panel.db");
    // [[hosts]] gave it the agent, token_env the token from /etc/gpudeck/agent.env: it holds one live stream
    const deadline = Date.now() + 20_000;
    for (;;) {
      const metrics = await fetch(`http://127.0.0.1:${agentPort}/metrics`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());
      if (/^gpudeck_agent_event_streams 1$/m.test(metrics)) break;
      if (Date.now() > deadline)
        throw new Error(
          `the panel did not connect to the agent:\n${metrics
            .split("\n")
            .filter((l) => l.includes("event_streams"))
            .join("\n")}`,
        );
      await sleep(250);
    }
  });

  it("gpudeck user, run as root, manages the panel's users as the panel's own user", async () => {
    const add = await sh([GPUDECK_BIN, "user", "add", "alice", "--role", "admin", "--no-password"], 60_000);
    expect(add.code, add.stdout + add.stderr).toBe(0);
    expect((await sh([GPUDECK_BIN, "user", "list"], 60_000)).stdout).toMatch(/alice.*admin/);
    // nothing in the panel's state directory belongs to root, so the panel can still write it
    expect((await sh(["find", "/var/lib/private/gpudeck-panel", "-user", "root"])).stdout.trim()).toBe("");
    expect((await waitHttp(`http://127.0.0.1:${panelPort}/login`, "the panel", 10_000)).status).toBe(200);
  });

  it("doctor passes on the installed host, and fails on a unit polkit refuses the agent's user and on a glob that matches nothing", async () => {
    const env = { FAKE_NVIDIA_SMI_STATE: FAKE_STATE };
    const asRoot = (config: string) => sb.exec([GPUDECK_BIN, "doctor", "--agent", "--config", config], { env, timeoutMs: 60_000 });
    const config = await sb.readFile("/etc/gpudeck/gpudeck.toml");
    await sb.writeFile("/etc/gpudeck/allowed.toml", config.replace(/^units = .*$/m, 'units = ["vllm-e2e*.service"]'), "0644");

    // as root it asks polkit about the agent's user (User= of the installed unit)
    const good = await asRoot("/etc/gpudeck/allowed.toml");
    expect(good.stdout).toMatch(/^ok +unit control +polkit lets gpudeck \(gpudeck-agent\.service\) start, stop and restart vllm-e2e\.service$/m);
    for (const id of ["system bus", "units", "nvidia-smi", "persistence mode", "journal", "agent data dir"])
      expect(good.stdout).toMatch(new RegExp(`^ok +${id} `, "m"));
    expect(good.code, good.stdout + good.stderr).toBe(0);

    // the installed config also shows other-e2e.service, which the polkit rule does not list
    const refused = await asRoot("/etc/gpudeck/gpudeck.toml");
    expect(refused.stdout).toMatch(/^ERROR +unit control +polkit does not let gpudeck start\/stop\/restart other-e2e\.service: /m);
    expect(refused.code).toBe(1);

    await sb.writeFile("/etc/gpudeck/typo.toml", '[agent]\nunits = ["vlm-*.service"]\n', "0644");
    const typo = await asRoot("/etc/gpudeck/typo.toml");
    expect(typo.stdout).toMatch(/^ERROR +units +no unit matches "vlm-\*\.service"$/m);
    expect(typo.code).toBe(1);

    // as the agent runs (its user and groups): the journal and its data dir
    const asAgent = [
      "systemd-run",
      "--quiet",
      "--wait",
      "--pipe",
      "-p",
      "User=gpudeck",
      "-p",
      "SupplementaryGroups=systemd-journal",
      "-E",
      `FAKE_NVIDIA_SMI_STATE=${FAKE_STATE}`,
    ];
    const agentView = await sh([...asAgent, GPUDECK_BIN, "doctor", "--agent", "--config", "/etc/gpudeck/allowed.toml"], 60_000);
    expect(agentView.stdout).toMatch(/^ok +journal +journalctl reads vllm-e2e\.service's log$/m);
    expect(agentView.stdout).toMatch(/^ok +agent data dir +\/var\/lib\/gpudeck-agent is writable and private \(mode 0700\)$/m);
    expect(agentView.stdout).toMatch(/^skip +unit control +polkit answers questions about a unit only to root/m);
    expect(agentView.code, agentView.stdout).toBe(0);
  });

  it("run as root instead (the drop-in), the agent may manage the unit the polkit rule does not list", async () => {
    await sb.writeFile("/etc/systemd/system/gpudeck-agent.service.d/root.conf", deployFile("gpudeck-agent-root.conf"));
    await systemctl("daemon-reload");
    await systemctl("restart", "gpudeck-agent.service");
    await waitHttp(`http://127.0.0.1:${agentPort}/healthz`, "the agent as root", 30_000);
    expect(await userOf("gpudeck-agent.service")).toBe("root");
    await sleep(500); // its first systemd snapshot
    await agent.units.start.mutate({ name: REFUSED });
    const deadline = Date.now() + 15_000;
    while ((await sh(["systemctl", "is-active", REFUSED])).stdout.trim() !== "active") {
      if (Date.now() > deadline) throw new Error(`${REFUSED} did not become active`);
      await sleep(100);
    }
    await systemctl("stop", "gpudeck-agent.service", "gpudeck-panel.service");
  });
});
