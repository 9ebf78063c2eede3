/**
 * What a doctor check is and what it may use. Each check is a small function of its inputs and
 * these ports (running a program, systemd on the bus, files, HTTP), so a unit test can make each
 * one pass and fail; server/doctor/system.ts has the real ports.
 */

export type CheckStatus = "ok" | "warn" | "error" | "skip";

export interface CheckResult {
  /** short stable name, e.g. "nvidia-smi" */
  id: string;
  status: CheckStatus;
  /** what was found, one line */
  detail: string;
  /** how to fix it (errors and warnings) */
  fix?: string;
}

export interface ExecResult {
  /** exit code; null when it did not exit by itself (signal, timeout) or did not start */
  code: number | null;
  stdout: string;
  stderr: string;
  /** killed after the timeout */
  timedOut: boolean;
  /** set when the program could not be started at all (ENOENT, EACCES, …) */
  spawnError?: string;
  /** wall time it took */
  ms: number;
}

export interface Runner {
  /** Run `file` with `args` (never through a shell); never rejects. */
  run(file: string, args: readonly string[], opts?: { timeoutMs?: number; env?: Record<string, string> }): Promise<ExecResult>;
}

/** systemd, as the agent reaches it: over the system bus. Methods reject with a readable message. */
export interface SystemdProbe {
  /** where it connects, for messages */
  address: string;
  /** the Manager's Version property, e.g. "252.39-1~deb12u2" */
  version(): Promise<string>;
  /** names of units (loaded, or with a unit file) that match these globs */
  unitsMatching(globs: readonly string[]): Promise<string[]>;
  /** the User= a service runs as ("" = root), or null when systemd has no such unit */
  serviceUser(unit: string): Promise<string | null>;
  close(): Promise<void>;
}

export interface FileInfo {
  isDirectory: boolean;
  /** permission bits, e.g. 0o700 */
  mode: number;
  uid: number;
}

export interface FilesPort {
  /** null when it does not exist */
  stat(path: string): Promise<FileInfo | null>;
  /** whether this process may write (and so create files) there */
  writable(path: string): Promise<boolean>;
  readText(path: string): Promise<string>;
}

export interface HttpResponse {
  status: number;
  text: string;
}

/** GET with a timeout; rejects with the transport's reason (connection refused, timeout, TLS). */
export type HttpGet = (url: string, headers: Record<string, string>, timeoutMs: number) => Promise<HttpResponse>;

/** Runs `fn` while a process of `user` exists (its pid), then ends that process: to ask polkit about that user. */
export type WithProcessOf = <T>(user: string, fn: (pid: number) => Promise<T>) => Promise<T>;

/** Who the doctor runs as: root may manage any unit and read every journal. */
export interface Identity {
  uid: number;
  /** supplementary and primary group names */
  groups: string[];
  pid: number;
}
