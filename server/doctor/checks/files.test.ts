import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { systemFiles } from "../system";
import type { FilesPort } from "../types";
import { checkConfigPrivacy, checkDataDir, checkTlsPair } from "./files";

const base = mkdtempSync(path.join(tmpdir(), "gpudeck-doctor-files-"));
function dir(name: string, mode: number): string {
  const d = path.join(base, name);
  mkdirSync(d, { recursive: true });
  chmodSync(d, mode);
  return d;
}

describe("data dir", () => {
  it("passes: a private directory this user can write", async () => {
    expect(await checkDataDir(systemFiles, dir("private", 0o700), "agent")).toMatchObject({ status: "ok", detail: expect.stringContaining("(mode 0700)") });
  });

  it("passes: not there yet but its parent is writable (created at first start)", async () => {
    expect((await checkDataDir(systemFiles, path.join(base, "later"), "panel")).status).toBe("ok");
  });

  it("fails: a file, not a directory", async () => {
    writeFileSync(path.join(base, "file"), "");
    expect((await checkDataDir(systemFiles, path.join(base, "file"), "agent")).status).toBe("error");
  });

  it("fails: not writable (a fake port: root can write anywhere)", async () => {
    const files: FilesPort = { stat: async () => ({ isDirectory: true, mode: 0o755, uid: 0 }), writable: async () => false, readText: async () => "" };
    const r = await checkDataDir(files, "/var/lib/gpudeck-agent", "agent");
    expect(r).toMatchObject({ status: "error", detail: "/var/lib/gpudeck-agent is not writable by this user (owner uid 0, mode 0755)" });
  });

  it("fails: the agent token in it is readable by others", async () => {
    const d = dir("leaky", 0o700);
    writeFileSync(path.join(d, "agent-token"), "t".repeat(43), { mode: 0o644 });
    const r = await checkDataDir(systemFiles, d, "agent");
    expect(r.status).toBe("error");
    expect(r.fix).toBe(`chmod 600 ${path.join(d, "agent-token")}`);
  });

  it("warns: open to every user", async () => {
    expect((await checkDataDir(systemFiles, dir("open", 0o777), "panel")).status).toBe("warn");
  });
});

describe("config file privacy", () => {
  const file = path.join(base, "gpudeck.toml");
  writeFileSync(file, "");

  it("passes: no secrets in it", async () => {
    chmodSync(file, 0o644);
    expect((await checkConfigPrivacy(systemFiles, file, [])).status).toBe("ok");
  });

  it("fails: a secret in a world-readable file", async () => {
    chmodSync(file, 0o644);
    const r = await checkConfigPrivacy(systemFiles, file, ["agent.token"]);
    expect(r).toMatchObject({ status: "error", detail: `${file} is readable by every user (mode 0644) and holds agent.token` });
  });

  it("passes: a secret in a private file", async () => {
    chmodSync(file, 0o640);
    expect((await checkConfigPrivacy(systemFiles, file, ["agent.token"])).status).toBe("ok");
  });
});

describe("TLS certificate and key", () => {
  const tls = dir("tls", 0o700);
  const make = (name: string, days: number) => {
    const key = path.join(tls, `${name}.key`);
    const cert = path.join(tls, `${name}.crt`);
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        String(days),
        "-subj",
        `/CN=${name}`,
      ],
      { stdio: "ignore" },
    );
    return { cert, key };
  };
  const good = make("good", 365);
  const short = make("short", 3);
  const other = make("other", 365);

  it("passes: readable, matching, valid", async () => {
    const r = await checkTlsPair(systemFiles, "agent", good.cert, good.key);
    expect(r.status).toBe("ok");
    expect(r.detail).toMatch(/valid for 36[45] more days/);
  });

  it("fails: the key is not the certificate's", async () => {
    expect(await checkTlsPair(systemFiles, "agent", good.cert, other.key)).toMatchObject({
      status: "error",
      detail: `${other.key} is not the key of ${good.cert}`,
    });
  });

  it("fails: expired; warns: expires soon", async () => {
    expect((await checkTlsPair(systemFiles, "agent", good.cert, good.key, Date.now() + 400 * 86_400_000)).detail).toContain("expired on");
    expect((await checkTlsPair(systemFiles, "agent", short.cert, short.key)).status).toBe("warn");
  });

  it("fails: a file that is missing or not PEM", async () => {
    expect((await checkTlsPair(systemFiles, "agent", path.join(tls, "missing.crt"), good.key)).detail).toContain("ENOENT");
    expect(readFileSync(good.key, "utf8")).toContain("PRIVATE KEY");
    expect((await checkTlsPair(systemFiles, "agent", good.key, good.key)).status).toBe("error");
  });
});
