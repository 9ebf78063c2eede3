import { describe, expect, it } from "vitest";
import { ensureDeps, installCommand, needs, planDeps, type Probes, type StepName } from "./testDeps";

const ALL: StepName[] = ["typecheck", "lint", "unit", "systemd", "e2e"];
const everything = new Set(needs().flatMap((n) => n.paths));

/** A machine with `files` (default: everything the list names), root or not. */
function machine(over: Partial<Probes> & { files?: Set<string> } = {}): Probes & { files: Set<string> } {
  const files = over.files ?? new Set(everything);
  return {
    files,
    exists: (f) => files.has(f),
    isRoot: true,
    hasApt: true,
    sandbox: () => ({ ok: true }),
    ci: false,
    ...over,
  };
}
const without = (...pkgs: string[]) => new Set(needs().flatMap((n) => (pkgs.includes(n.pkg) ? [] : n.paths)));

function run(steps: StepName[], probes: Probes & { files: Set<string> }, aptResult: (args: string[]) => string | null = () => null) {
  const apt: string[][] = [];
  const said: string[] = [];
  const outcome = ensureDeps(
    steps,
    probes,
    (args) => {
      apt.push(args);
      const failed = aptResult(args);
      // a working apt-get install puts the packages' files in place
      if (!failed && args[0] === "install") for (const n of needs()) if (args.includes(n.pkg)) n.paths.forEach((f) => probes.files.add(f));
      return failed;
    },
    (l) => said.push(l),
  );
  return { outcome, apt, said };
}

describe("npm test's dependency check", () => {
  it("knows every program the steps need, with its Debian package (the proxies suite's nginx, haproxy and promtool too)", () => {
    const byPkg = Object.fromEntries(needs().map((n) => [n.pkg, n.paths]));
    expect(byPkg).toMatchObject({
      chromium: ["/usr/bin/chromium"],
      postgresql: ["/usr/lib/postgresql/*/bin/initdb"],
      polkitd: ["/usr/lib/polkit-1/polkitd", "/usr/bin/pkcheck"],
      openssl: ["/usr/bin/openssl"],
      nginx: ["/usr/sbin/nginx"],
      haproxy: ["/usr/sbin/haproxy"],
      prometheus: ["/usr/bin/promtool"],
    });
    expect(needs({ CHROMIUM_PATH: "/opt/chrome/chrome" }).find((n) => n.pkg === "chromium")!.paths).toEqual(["/opt/chrome/chrome"]);
    for (const n of needs()) expect(n.why.length).toBeGreaterThan(10);
  });

  it("with everything there: nothing to install, nothing skipped, apt not run", () => {
    const r = run(ALL, machine());
    expect(r.outcome).toEqual({ ok: true, skipped: new Map(), partial: new Map(), installed: [] });
    expect(r.apt).toEqual([]);
    expect(r.said).toEqual([]);
  });

  it("as root with apt: installs what is missing once, saying what and why in one line, then goes on", () => {
    const r = run(ALL, machine({ files: without("chromium", "nginx") }));
    expect(r.apt).toEqual([
      ["update", "-qq"],
      ["install", "-y", "-qq", "chromium", "nginx"],
    ]);
    expect(r.said).toHaveLength(1);
    expect(r.said[0]).toMatch(/^installing chromium, nginx with apt-get, for the tests: chromium \(the browser suite.*\); nginx \(e2e\/proxies/);
    expect(r.outcome).toEqual({ ok: true, skipped: new Map(), partial: new Map(), installed: ["chromium", "nginx"] });
  });

  it("checks only what the steps that run need: --skip=e2e,systemd does not ask for chromium or nginx", () => {
    const r = run(["typecheck", "lint", "unit"], machine({ files: without("chromium", "nginx", "haproxy", "prometheus", "polkitd") }));
    expect(r.apt).toEqual([]);
    expect(r.outcome.ok).toBe(true);
  });

  it("not root: stops at once with the exact command (sudo apt-get install …), and never runs apt", () => {
    const r = run(ALL, machine({ isRoot: false, files: without("chromium", "openssl") }));
    expect(r.apt).toEqual([]);
    expect(r.outcome.ok).toBe(false);
    const message = (r.outcome as { message: string }).message;
    expect(message).toContain("\n  sudo apt-get install -y chromium openssl\n");
    expect(message).toContain("npm test -- --skip=unit,e2e");
  });

  it("not root: skips the systemd step with its reason, and does not ask for what only root's tests use", () => {
    // no sandbox programs, no PostgreSQL (its tests skip without root), no proxies (systemd step only)
    const probes = machine({ isRoot: false, files: without("postgresql", "systemd", "dbus", "util-linux", "nginx", "haproxy", "prometheus", "polkitd") });
    const r = run(ALL, probes);
    expect(r.apt).toEqual([]);
    expect(r.outcome.ok).toBe(true);
    const skipped = (r.outcome as { skipped: Map<StepName, string> }).skipped;
    expect([...skipped.keys()]).toEqual(["systemd"]);
    expect(skipped.get("systemd")).toMatch(/^not running as root: the real-systemd sandbox needs root/);
  });

  it("not root: the browser step runs without its real-systemd project, and says why", () => {
    const r = run(ALL, machine({ isRoot: false, files: without("systemd", "dbus", "util-linux") }));
    expect(r.outcome.ok).toBe(true);
    const partial = (r.outcome as { partial: Map<StepName, { without: string; why: string }> }).partial;
    expect([...partial.keys()]).toEqual(["e2e"]);
    expect(partial.get("e2e")).toEqual({ without: "real-systemd", why: expect.stringMatching(/^not running as root: the real-systemd sandbox needs root/) });
  });

  it("as root with a sandbox that cannot boot: the systemd step is skipped and the browser step runs without real-systemd", () => {
    const probes = machine({ sandbox: () => ({ ok: false, reason: "no cgroup2 hierarchy" }) });
    const r = run(ALL, probes);
    expect(r.outcome).toMatchObject({
      ok: true,
      skipped: new Map([["systemd", "the real-systemd sandbox cannot boot here: no cgroup2 hierarchy"]]),
      partial: new Map([["e2e", { without: "real-systemd", why: "the real-systemd sandbox cannot boot here: no cgroup2 hierarchy" }]]),
    });
  });

  it("in CI the browser step's real-systemd project must run too (--skip=systemd, not root, is still an error)", () => {
    const r = run(["typecheck", "lint", "unit", "e2e"], machine({ isRoot: false, ci: true }));
    expect(r.outcome.ok).toBe(false);
    expect((r.outcome as { message: string }).message).toMatch(/^CI \(CI=true\) must run every step.*\n {2}e2e's real-systemd project: not running as root/s);
  });

  it("as root, a sandbox that cannot boot (no cgroup2) skips the systemd step, asked after the install put its programs in place", () => {
    const probes = machine({ files: without("systemd") });
    let askedWith: boolean | null = null;
    probes.sandbox = () => {
      askedWith = probes.files.has("/lib/systemd/systemd");
      return { ok: false, reason: "no cgroup2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup" };
    };
    const r = run(ALL, probes);
    expect(r.apt[1]).toEqual(["install", "-y", "-qq", "systemd"]);
    expect(askedWith).toBe(true);
    expect(r.outcome).toMatchObject({
      ok: true,
      skipped: new Map([["systemd", "the real-systemd sandbox cannot boot here: no cgroup2 hierarchy at /sys/fs/cgroup/unified or /sys/fs/cgroup"]]),
    });
  });

  it("in CI a step that cannot run is an error, not a skip", () => {
    const r = run(ALL, machine({ isRoot: false, ci: true }));
    expect(r.outcome.ok).toBe(false);
    expect((r.outcome as { message: string }).message).toMatch(/^CI \(CI=true\) must run every step.*\n {2}systemd: not running as root/s);
  });

  it("root without apt (not Debian or Ubuntu): names the Debian packages to find equivalents of", () => {
    const r = run(ALL, machine({ hasApt: false, files: without("haproxy") }));
    expect(r.apt).toEqual([]);
    expect((r.outcome as { message: string }).message).toMatch(/To fix: install the equivalents of Debian's haproxy, or leave out .* --skip=systemd\.$/);
  });

  it("a failing apt-get stops with its words and the command to run by hand", () => {
    const r = run(ALL, machine({ files: without("prometheus") }), (args) =>
      args[0] === "install" ? "apt-get install exited with 100:\nE: Unable to locate package prometheus" : null,
    );
    expect(r.outcome.ok).toBe(false);
    expect((r.outcome as { message: string }).message).toContain("E: Unable to locate package prometheus\nTo fix: run\n  apt-get install -y prometheus\n");
  });

  it("an install that leaves a file missing says which", () => {
    const probes = machine({ files: without("polkitd") });
    const r = ensureDeps(
      ALL,
      probes,
      () => null,
      () => undefined,
    );
    expect(r).toEqual({ ok: false, message: expect.stringContaining("/usr/lib/polkit-1/polkitd, /usr/bin/pkcheck") });
  });

  it("planDeps and installCommand: a package named once even when several files are missing", () => {
    const plan = planDeps(ALL, machine({ files: without("util-linux") }));
    expect(plan.missing.map((n) => n.pkg)).toEqual(["util-linux"]);
    expect(installCommand([...plan.missing, ...plan.missing], true)).toBe("apt-get install -y util-linux");
  });
});
