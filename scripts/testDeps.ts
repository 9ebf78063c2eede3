/**
 * What `npm test`'s steps need from the machine, checked before the first step starts: one list
 * (programs, the Debian package that has each, and why), used by scripts/test.ts and, through
 * `npm test -- --deps-only`, by .ci/run. As root on Debian or Ubuntu with apt, whatever is missing
 * is installed (one line says what and why); otherwise it stops at once with the exact command,
 * instead of forty tests failing one by one. A step that cannot run here at all (the real-systemd
 * sandbox without root) is skipped with its reason, and a step that boots it for one part (the
 * browser suite's real-systemd project) runs without that part, saying why; in CI (CI=true) either
 * is an error instead.
 *
 * The decisions (`planDeps`, `ensureDeps`) take the machine as `Probes`, so they are unit-tested
 * without touching apt (testDeps.test.ts); `machineProbes()` and `runApt()` are the real ones.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { sandboxSupport } from "../e2e/sandbox/sandbox";

export type StepName = "typecheck" | "lint" | "unit" | "systemd" | "e2e" | "e2e-oidc";

export interface Need {
  /** the Debian (and Ubuntu) package that installs it */
  pkg: string;
  /** files that must all exist; one path segment may be `*` (`/usr/lib/postgresql/*\/bin/initdb`) */
  paths: string[];
  /** the steps whose tests use it */
  steps: StepName[];
  /** its tests run only as root (they skip loudly otherwise): not needed when not root */
  rootOnly?: boolean;
  why: string;
}

/** Steps that boot the real-systemd sandbox (e2e/sandbox) for everything they test: root only. */
export const SANDBOX_STEPS: readonly StepName[] = ["systemd"];

/** Steps that boot the sandbox for one part only (a Playwright project): without it they run the rest. */
export const SANDBOX_PARTS: Readonly<Partial<Record<StepName, string>>> = { e2e: "real-systemd" };

/** A step that runs here without one of its parts, and why. */
export interface PartialStep {
  without: string;
  why: string;
}

export function needs(env: Record<string, string | undefined> = process.env): Need[] {
  const chromium = env.CHROMIUM_PATH || "/usr/bin/chromium";
  return [
    {
      pkg: "chromium",
      paths: [chromium],
      steps: ["e2e", "e2e-oidc", "systemd"],
      why: "the browser suite and the browser benchmarks' smoke runs drive Debian's chromium (Playwright cannot download its own here)",
    },
    {
      pkg: "postgresql",
      paths: ["/usr/lib/postgresql/*/bin/initdb"],
      steps: ["unit", "systemd"],
      rootOnly: true,
      why: "the replica and alert-store tests start a throw-away PostgreSQL cluster (initdb)",
    },
    { pkg: "openssl", paths: ["/usr/bin/openssl"], steps: ["unit"], why: "the doctor's and the agent's TLS tests make certificates with openssl" },
    {
      pkg: "polkitd",
      paths: ["/usr/lib/polkit-1/polkitd", "/usr/bin/pkcheck"],
      steps: ["systemd"],
      why: "e2e/install runs the agent's polkit rule with a real polkitd in the sandbox",
    },
    { pkg: "nginx", paths: ["/usr/sbin/nginx"], steps: ["systemd"], why: "e2e/proxies runs the README's nginx block in front of the panel" },
    { pkg: "haproxy", paths: ["/usr/sbin/haproxy"], steps: ["systemd"], why: "e2e/proxies runs the README's HAProxy backend in front of the panel" },
    { pkg: "prometheus", paths: ["/usr/bin/promtool"], steps: ["systemd"], why: "e2e/proxies checks an agent's /metrics with promtool check metrics" },
    // what e2e/sandbox/sandbox.ts boots the sandbox with (its REQUIRED_BINARIES); the browser
    // suite's real-systemd project boots one too
    { pkg: "systemd", paths: ["/lib/systemd/systemd"], steps: ["systemd", "e2e"], rootOnly: true, why: "the sandbox boots systemd as its PID 1" },
    { pkg: "dbus", paths: ["/usr/bin/dbus-daemon"], steps: ["systemd", "e2e"], rootOnly: true, why: "the sandbox's system bus" },
    {
      pkg: "util-linux",
      paths: ["/usr/bin/unshare", "/usr/bin/nsenter", "/usr/bin/setpriv"],
      steps: ["systemd", "e2e"],
      rootOnly: true,
      why: "the sandbox's namespaces",
    },
  ];
}

/** The machine, as the decisions see it. */
export interface Probes {
  /** whether a file exists; one path segment may be `*` */
  exists(file: string): boolean;
  isRoot: boolean;
  /** Debian or Ubuntu (or a derivative) with apt-get */
  hasApt: boolean;
  /** whether the real-systemd sandbox can boot here; asked only as root, after any install */
  sandbox(): { ok: true } | { ok: false; reason: string };
  ci: boolean;
}

export interface Plan {
  /** steps that cannot run here, each with its reason */
  skipped: Map<StepName, string>;
  /** steps that run without their sandbox part (SANDBOX_PARTS) */
  partial: Map<StepName, PartialStep>;
  /** needs of the steps that run that this machine lacks */
  missing: Need[];
}

/** Mark what needs the sandbox, in `steps`, as unable to run here for `why`. */
function withoutSandbox(steps: readonly StepName[], why: string, plan: Pick<Plan, "skipped" | "partial">): void {
  for (const s of steps) {
    if (SANDBOX_STEPS.includes(s)) plan.skipped.set(s, why);
    const part = SANDBOX_PARTS[s];
    if (part) plan.partial.set(s, { without: part, why });
  }
}

function sandboxUnavailable(p: Probes): string | null {
  if (!p.isRoot) return "not running as root: the real-systemd sandbox needs root (namespaces, pivot_root); run `sudo npm test` to include it";
  const s = p.sandbox();
  return s.ok ? null : `the real-systemd sandbox cannot boot here: ${s.reason}`;
}

/** Which of `steps` cannot run here, and what the others lack. Pure but for `probes`. */
export function planDeps(steps: readonly StepName[], probes: Probes, list: readonly Need[] = needs()): Plan {
  const plan: Plan = { skipped: new Map(), partial: new Map(), missing: [] };
  // without root the sandbox cannot run whatever is installed; as root its programs may still be
  // missing (they are in the list below): asked again once they are installed
  if (!probes.isRoot) withoutSandbox(steps, sandboxUnavailable(probes)!, plan);
  const running = steps.filter((s) => !plan.skipped.has(s));
  plan.missing = list.filter((n) => n.steps.some((s) => running.includes(s)) && (probes.isRoot || !n.rootOnly) && !n.paths.every((f) => probes.exists(f)));
  return plan;
}

function reasons(missing: readonly Need[]): string {
  return missing.map((n) => `${n.pkg} (${n.why})`).join("; ");
}

export function installCommand(missing: readonly Need[], isRoot: boolean): string {
  return `${isRoot ? "" : "sudo "}apt-get install -y ${[...new Set(missing.map((n) => n.pkg))].join(" ")}`;
}

export type DepsOutcome =
  { ok: true; skipped: Map<StepName, string>; partial: Map<StepName, PartialStep>; installed: string[] } | { ok: false; message: string };

/**
 * Checks, installs when it may (root and apt), checks again; then asks whether the sandbox boots.
 * `apt(args)` runs apt-get and returns null or why it failed; `say` prints one line.
 */
export function ensureDeps(
  steps: readonly StepName[],
  probes: Probes,
  apt: (args: string[]) => string | null,
  say: (line: string) => void,
  list: readonly Need[] = needs(),
): DepsOutcome {
  let plan = planDeps(steps, probes, list);
  const installed: string[] = [];
  if (plan.missing.length > 0) {
    const command = installCommand(plan.missing, probes.isRoot);
    const userSteps = steps.filter((s) => !plan.skipped.has(s) && plan.missing.some((n) => n.steps.includes(s)));
    const orSkip = `, or leave out the steps that need them: npm test -- --skip=${userSteps.join(",")}`;
    if (!probes.isRoot || !probes.hasApt) {
      const how = probes.hasApt
        ? `run\n  ${command}\nthen npm test again`
        : `install the equivalents of Debian's ${command.replace(/^(sudo )?apt-get install -y /, "")}`;
      return { ok: false, message: `npm test needs what this machine lacks: ${reasons(plan.missing)}.\nTo fix: ${how}${orSkip}.` };
    }
    const pkgs = [...new Set(plan.missing.map((n) => n.pkg))];
    say(`installing ${pkgs.join(", ")} with apt-get, for the tests: ${reasons(plan.missing)}`);
    const failed = apt(["update", "-qq"]) ?? apt(["install", "-y", "-qq", ...pkgs]);
    if (failed) return { ok: false, message: `apt-get could not install ${pkgs.join(" ")}: ${failed}\nTo fix: run\n  ${command}\nand see its output.` };
    installed.push(...pkgs);
    plan = planDeps(steps, probes, list);
    if (plan.missing.length > 0)
      return { ok: false, message: `still missing after apt-get installed ${pkgs.join(" ")}: ${plan.missing.flatMap((n) => n.paths).join(", ")}` };
  }
  if (probes.isRoot) {
    const why = sandboxUnavailable(probes);
    if (why) withoutSandbox(steps, why, plan);
  }
  if (probes.ci && plan.skipped.size + plan.partial.size > 0) {
    const lines = [
      ...[...plan.skipped].map(([s, why]) => `  ${s}: ${why}`),
      ...[...plan.partial].map(([s, p]) => `  ${s}'s ${p.without} project: ${p.why}`),
    ].join("\n");
    return { ok: false, message: `CI (CI=true) must run every step, and these cannot run here:\n${lines}` };
  }
  return { ok: true, skipped: plan.skipped, partial: plan.partial, installed };
}

/** `exists` with one `*` segment allowed. */
function existsGlob(file: string): boolean {
  const star = file.split("/").indexOf("*");
  if (star < 0) return existsSync(file);
  const parts = file.split("/");
  const dir = parts.slice(0, star).join("/") || "/";
  const rest = parts.slice(star + 1).join("/");
  try {
    return readdirSync(dir).some((entry) => existsSync(path.join(dir, entry, rest)));
  } catch {
    return false;
  }
}

function debianLike(): boolean {
  try {
    const release = readFileSync("/etc/os-release", "utf8");
    const ids = [...release.matchAll(/^(?:ID|ID_LIKE)=("?)([^"\n]*)\1$/gm)].flatMap((m) => m[2]!.split(/\s+/));
    return ids.some((id) => id === "debian" || id === "ubuntu");
  } catch {
    return false;
  }
}

export function machineProbes(env: Record<string, string | undefined> = process.env): Probes {
  return {
    exists: existsGlob,
    isRoot: process.getuid?.() === 0,
    hasApt: debianLike() && existsSync("/usr/bin/apt-get"),
    sandbox: () => {
      const s = sandboxSupport();
      return s.ok ? { ok: true } : { ok: false, reason: s.reason };
    },
    ci: Boolean(env.CI) && env.CI !== "false" && env.CI !== "0",
  };
}

/** apt-get, quiet unless it fails: then the last lines of what it said. */
export function runApt(args: string[]): string | null {
  const r = spawnSync("apt-get", args, {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status === 0) return null;
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n").slice(-15).join("\n");
  return `apt-get ${args.join(" ")} ${r.error ? `did not run (${r.error.message})` : `exited with ${r.status ?? r.signal}`}${out ? `:\n${out}` : ""}`;
}
