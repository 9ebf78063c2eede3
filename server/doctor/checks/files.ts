/**
 * Files the processes depend on: the data dir (writable by this user, private: it holds the
 * agent's token and the panel's sessions), the config file (private when it holds a secret), and
 * TLS certificate/key pairs (readable, matching, not expired).
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import path from "node:path";
import type { CheckResult, FilesPort } from "../types";

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

export async function checkDataDir(files: FilesPort, dir: string, who: "agent" | "panel"): Promise<CheckResult> {
  const id = `${who} data dir`;
  const info = await files.stat(dir);
  if (!info) {
    const parent = path.dirname(dir);
    if (await files.writable(parent)) return { id, status: "ok", detail: `${dir} does not exist yet; it is created at the first start` };
    return {
      id,
      status: "error",
      detail: `${dir} does not exist and ${parent} is not writable by this user`,
      fix: `create it for the ${who}'s user (the shipped unit's StateDirectory= does), or set ${who}.data_dir (GPUDECK_DATA_DIR)`,
    };
  }
  if (!info.isDirectory) return { id, status: "error", detail: `${dir} is not a directory`, fix: `point ${who}.data_dir (GPUDECK_DATA_DIR) at a directory` };
  if (!(await files.writable(dir))) {
    return {
      id,
      status: "error",
      detail: `${dir} is not writable by this user (owner uid ${info.uid}, mode ${octal(info.mode)})`,
      fix: `chown it to the ${who}'s user, or let systemd's StateDirectory= manage it`,
    };
  }
  const token = path.join(dir, "agent-token");
  const tokenInfo = await files.stat(token);
  if (tokenInfo && (tokenInfo.mode & 0o077) !== 0) {
    return {
      id,
      status: "error",
      detail: `${token} is readable by others (mode ${octal(tokenInfo.mode)}): it is the agent's bearer token`,
      fix: `chmod 600 ${token}`,
    };
  }
  if ((info.mode & 0o007) !== 0) {
    return {
      id,
      status: "warn",
      detail: `${dir} is open to every user (mode ${octal(info.mode)}); it holds tokens, sessions and history`,
      fix: `chmod 700 ${dir}`,
    };
  }
  return { id, status: "ok", detail: `${dir} is writable and private (mode ${octal(info.mode)})` };
}

/** A config file that holds a secret must not be readable by every user. */
export async function checkConfigPrivacy(files: FilesPort, file: string, secretKeys: readonly string[]): Promise<CheckResult> {
  if (secretKeys.length === 0) return { id: "config secrets", status: "ok", detail: `${file} holds no secrets` };
  const info = await files.stat(file);
  if (info && (info.mode & 0o004) !== 0) {
    return {
      id: "config secrets",
      status: "error",
      detail: `${file} is readable by every user (mode ${octal(info.mode)}) and holds ${secretKeys.join(", ")}`,
      fix: `move the secrets to a root-only EnvironmentFile (/etc/gpudeck/*.env) or token files, or chmod 640 ${file} and give the group to the services' user`,
    };
  }
  return { id: "config secrets", status: "ok", detail: `${file} holds ${secretKeys.join(", ")} and is not world-readable` };
}

export const CERT_WARN_DAYS = 14;

export async function checkTlsPair(files: FilesPort, label: string, certFile: string, keyFile: string, now = Date.now()): Promise<CheckResult> {
  const id = `TLS (${label})`;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(await files.readText(certFile));
  } catch (err) {
    return {
      id,
      status: "error",
      detail: `cannot read the certificate ${certFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      fix: "a PEM certificate readable by the service's user",
    };
  }
  let keyMatches: boolean;
  try {
    keyMatches = cert.checkPrivateKey(createPrivateKey(await files.readText(keyFile)));
  } catch (err) {
    return {
      id,
      status: "error",
      detail: `cannot read the private key ${keyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      fix: "a PEM private key readable by the service's user",
    };
  }
  if (!keyMatches) return { id, status: "error", detail: `${keyFile} is not the key of ${certFile}`, fix: "give the key the certificate was issued for" };
  const expires = Date.parse(cert.validTo);
  if (expires <= now) return { id, status: "error", detail: `${certFile} expired on ${cert.validTo}`, fix: "renew the certificate" };
  if (Date.parse(cert.validFrom) > now)
    return { id, status: "error", detail: `${certFile} is not valid before ${cert.validFrom}`, fix: "check the clock, or the certificate" };
  const days = Math.floor((expires - now) / 86_400_000);
  if (days < CERT_WARN_DAYS) return { id, status: "warn", detail: `${certFile} expires in ${days} days (${cert.validTo})`, fix: "renew the certificate" };
  return { id, status: "ok", detail: `${certFile} (${cert.subject.replace(/\n/g, ", ")}) is valid for ${days} more days and matches ${keyFile}` };
}
