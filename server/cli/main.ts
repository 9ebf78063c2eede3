/**
 * Entry of `gpudeck units|restart|start|stop|logs` (bin/gpudeck.js runs it with tsx): wires the
 * process to ./remote.ts. Ctrl-C ends a follow (the action goes on in the panel); a second one
 * ends the process at once.
 */
import { homedir } from "node:os";
import { runRemoteCli } from "./remote";

const interrupted = new AbortController();
process.on("SIGINT", () => {
  if (interrupted.signal.aborted) process.exit(130);
  interrupted.abort();
});
process.on("SIGTERM", () => process.exit(143));

const code = await runRemoteCli(process.argv.slice(2), {
  env: process.env,
  home: homedir(),
  stdout: process.stdout,
  stderr: process.stderr,
  signal: interrupted.signal,
});
process.exitCode = code;
// open sockets (an EventSource reconnecting) must not keep a finished command alive
setTimeout(() => process.exit(code), 200).unref();
