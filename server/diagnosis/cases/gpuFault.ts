/**
 * GPU faults: an NVIDIA Xid in the kernel log since the unit's current (or last) run began, from
 * its process or on a GPU it uses. A fault that needs a GPU reset (Xid 79 fell off the bus, 48
 * double-bit ECC, 119 GSP timeout …) explains the unit whatever its state — restarting will not
 * help; any other Xid from the unit's own process explains a final failure.
 */
import type { Diagnosis } from "../../contract/diagnosis";
import type { GpuFault } from "../../contract/faults";
import { formatClock, formatGpus, formatTimestamp, truncate } from "../../contract/format";
import type { DiagnosisCase } from "../case";
import { usecToMs, type DiagnosisContext } from "../context";
import { stateEvidence } from "../evidence";

/** A fault this much before the run began still counts (the driver logs as the process dies). */
const BEFORE_RUN_MS = 5_000;
/** Without systemd's timestamps, faults of the last hour count. */
const FALLBACK_WINDOW_MS = 3600_000;

export const gpuFaultCase: DiagnosisCase = {
  id: "gpu-fault",
  codes: ["gpu-xid"],
  diagnose(ctx) {
    const faults = relevantFaults(ctx);
    const fatal = faults.filter((f) => f.resetRequired).at(-1);
    if (fatal) return faultDiagnosis(ctx, fatal, faults);
    const u = ctx.unit;
    const finalFailure = u.activeState === "failed" && !(ctx.lastTransition?.inRestartCycle ?? false);
    const own = faults.filter((f) => f.unit === ctx.name).at(-1);
    return finalFailure && own ? faultDiagnosis(ctx, own, faults) : null;
  },
};

function relevantFaults(ctx: DiagnosisContext): GpuFault[] {
  const all = ctx.facts.faults ?? [];
  if (all.length === 0) return [];
  const runStart = usecToMs(ctx.unit.timestamps.inactiveExitUsec);
  const since = runStart !== null ? runStart - BEFORE_RUN_MS : ctx.now - FALLBACK_WINDOW_MS;
  return all.filter((f) => f.atMs >= since && f.atMs <= ctx.now + 1000);
}

function faultDiagnosis(ctx: DiagnosisContext, f: GpuFault, all: GpuFault[]): Diagnosis {
  const at = `${formatClock(f.atMs).slice(0, 5)} UTC`;
  const where = f.gpuUuid ? ` on ${formatGpus([{ uuid: f.gpuUuid, index: f.gpuIndex }])}` : ` (PCI ${f.pci})`;
  const tail = f.resetRequired ? "restart will not help; the host needs a reset" : lowerFirst(f.advice.replace(/\.$/, ""));
  const others = all.filter((x) => x !== f).length;
  return {
    severity: f.severity === "info" ? "warning" : f.severity,
    code: "gpu-xid",
    headline: `Xid ${f.code}: ${f.title} at ${at}${where} — ${tail}.`,
    evidence: [
      stateEvidence(ctx),
      { label: `Xid ${f.code}`, value: truncate(`${formatTimestamp(f.atMs)}: ${f.text}`, 240), source: "journal" },
      { label: "Meaning", value: f.meaning, source: "gpudeck" },
      ...(f.pid !== null
        ? [{ label: "Process", value: `PID ${f.pid}${f.processName ? ` (${f.processName})` : ""}${f.unit ? `, ${f.unit}` : ""}`, source: "journal" as const }]
        : []),
      ...(others > 0
        ? [
            {
              label: "Other Xids",
              value: all
                .filter((x) => x !== f)
                .slice(-5)
                .map((x) => `${x.code} at ${formatClock(x.atMs)}`)
                .join(", "),
              source: "journal" as const,
            },
          ]
        : []),
    ],
    nextStep: { text: f.advice },
  };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
