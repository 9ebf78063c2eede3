/**
 * Runs the real GPU pipeline (nvidia-smi sampler → /proc → attribution) and prints one JSON
 * line per event on stdout. Started INSIDE the systemd sandbox by attribution.test.ts, so the
 * PIDs nvidia-smi reports, /proc and the cgroups are all the sandbox's own, as on a real host.
 *
 *   node --import tsx e2e/gpu/attributionProbe.ts <nvidia-smi path> <interval ms>
 */
import { GpuAttributor, createNvidiaSmiAdapter, createProcAdapter } from "../../server/agent/gpu/index";

const [smiPath = "nvidia-smi", intervalText = "500"] = process.argv.slice(2);
const procs = createProcAdapter();
const attributor = new GpuAttributor(procs);
const adapter = createNvidiaSmiAdapter({
  nvidiaSmiPath: smiPath,
  intervalMs: Number(intervalText),
  log: (message) => emit({ type: "log", message }),
});

function emit(event: unknown): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

// Attribution is async; keep samples in order.
let chain = Promise.resolve();
adapter.start(
  (raw) => {
    chain = chain.then(async () => emit({ type: "sample", sample: await attributor.attribute(raw) }));
  },
  (status) => emit({ type: "status", status }),
);

const stop = () => {
  void adapter.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
