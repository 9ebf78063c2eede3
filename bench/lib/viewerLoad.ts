/** The bench's side of bench/lib/viewers.ts: a forked load process and typed calls to it. */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { ViewerCommand, ViewerStats, ViewerTarget } from "./viewers";

export class ViewerLoad {
  private constructor(private readonly child: ChildProcess) {}

  static start(): ViewerLoad {
    const child = fork(fileURLToPath(new URL("./viewers.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new ViewerLoad(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private ask<T>(cmd: ViewerCommand, answer: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: { type: string } & T) => {
        if (m.type !== answer) return;
        this.child.off("message", onMessage);
        this.child.off("exit", onExit);
        resolve(m);
      };
      const onExit = (code: number | null) => reject(new Error(`the viewer process exited (${code})`));
      this.child.on("message", onMessage);
      this.child.once("exit", onExit);
      this.child.send(cmd);
    });
  }

  async set(targets: ViewerTarget[], count: number, timeoutMs: number): Promise<{ open: number; connected: number; refused: number }> {
    return this.ask({ type: "set", targets, count, timeoutMs }, "set");
  }

  async reset(): Promise<void> {
    await this.ask({ type: "reset" }, "reset");
  }

  async stats(): Promise<ViewerStats> {
    return (await this.ask<{ stats: ViewerStats }>({ type: "stats" }, "stats")).stats;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.send({ type: "close" });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
