/**
 * The common NVIDIA Xid codes, what they mean and what to do (after NVIDIA's "Xid Errors"
 * catalog and its GPU debug guidelines). `resetRequired`: restarting the unit will not help;
 * the GPU, and usually the host, needs a reset.
 */
import type { XidMeaning } from "../../contract/faults";

type Entry = Omit<XidMeaning, "code">;

const RESET = "restart will not help; the host needs a reset";

export const XID_CODES: ReadonlyMap<number, Entry> = new Map<number, Entry>([
  [
    13,
    {
      title: "Graphics engine exception",
      meaning: "A kernel faulted (out-of-range access, illegal instruction); usually a bug in the application or its CUDA libraries.",
      advice: "Check the service's log for the CUDA error; restarting it is fine. If it repeats across different programs, run GPU diagnostics (dcgmi diag).",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    31,
    {
      title: "GPU memory page fault",
      meaning: "A process accessed an invalid GPU address (MMU fault); usually an application bug, sometimes a driver problem.",
      advice: "Check the service's log; restarting it is fine. If it repeats with several programs, update the driver and run GPU diagnostics.",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    43,
    {
      title: "GPU stopped processing",
      meaning: "The driver stopped a context after it hit a fault (it usually follows Xid 13 or 31); other processes on the GPU are not affected.",
      advice: "Look for the Xid before it; restarting the service is fine.",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    45,
    {
      title: "Preemptive cleanup",
      meaning: "The driver cleaned up a context because its process was killed or failed earlier; expected after a SIGKILL.",
      advice: "Nothing to do on its own; look for other Xids next to it.",
      resetRequired: false,
      severity: "info",
    },
  ],
  [
    48,
    {
      title: "Double-bit ECC error",
      meaning: "An uncorrectable memory error (DBE); the processes using the GPU were stopped.",
      advice: `The GPU needs a reset (${RESET}); if it happens again, have the GPU replaced.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    61,
    {
      title: "Internal micro-controller breakpoint",
      meaning: "The GPU's internal micro-controller (PMU) hit a breakpoint or warning: a firmware or driver fault.",
      advice: `Reset the GPU (${RESET}); update the driver if it recurs and report it to NVIDIA.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    62,
    {
      title: "Internal micro-controller halt",
      meaning: "The GPU's internal micro-controller halted: a firmware, driver or thermal fault.",
      advice: `Reset the GPU (${RESET}); check cooling and the driver version if it recurs.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    63,
    {
      title: "ECC page retirement / row remapping recorded",
      meaning: "The driver recorded a memory page retirement or a row remap after ECC errors; it takes effect at the next GPU reset.",
      advice: "Services may keep running; schedule a GPU reset so the remap applies. Repeated events mean the GPU should be replaced.",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    64,
    {
      title: "ECC page retirement / row remapping failed",
      meaning: "The driver could not record a page retirement or row remap after ECC errors.",
      advice: `Reset the GPU (${RESET}) and have it checked; it may need replacement.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    74,
    {
      title: "NVLink error",
      meaning: "An NVLink connection between GPUs (or to an NVSwitch) reported an error.",
      advice: `Reset the GPUs (${RESET}); if it recurs, check the NVLink bridges/baseboard and the fabric manager.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    79,
    {
      title: "GPU has fallen off the bus",
      meaning: "The GPU no longer answers on PCIe (power, thermal, PCIe or hardware failure).",
      advice: `${RESET[0]!.toUpperCase()}${RESET.slice(1)}; if it recurs, check power, cooling and the PCIe slot/riser.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    92,
    {
      title: "High single-bit ECC error rate",
      meaning: "Correctable ECC errors are frequent on this GPU.",
      advice: "Services keep running; watch the ECC counts and plan to replace the GPU if the rate stays high.",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    94,
    {
      title: "Contained ECC error",
      meaning: "An uncorrectable memory error was contained: only the processes using that memory were stopped.",
      advice: "Restarting the affected service is fine; schedule a GPU reset so the bad memory is remapped.",
      resetRequired: false,
      severity: "warning",
    },
  ],
  [
    95,
    {
      title: "Uncontained ECC error",
      meaning: "An uncorrectable memory error could not be contained: every process on the GPU is affected.",
      advice: `The GPU needs a reset (${RESET}); have it checked if it recurs.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    119,
    {
      title: "GSP RPC timeout",
      meaning: "The GPU System Processor (GSP firmware) stopped answering the driver.",
      advice: `Reset the GPU (${RESET}); if it recurs, update the driver (or run with GSP firmware disabled where supported).`,
      resetRequired: true,
      severity: "critical",
    },
  ],
  [
    120,
    {
      title: "GSP error",
      meaning: "The GPU System Processor (GSP firmware) reported an error.",
      advice: `Reset the GPU (${RESET}); update the driver if it recurs.`,
      resetRequired: true,
      severity: "critical",
    },
  ],
]);

/** The table's entry, or a generic one for codes it does not know. */
export function xidMeaning(code: number): XidMeaning {
  const known = XID_CODES.get(code);
  if (known) return { code, ...known };
  return {
    code,
    title: `Xid ${code}`,
    meaning: "An NVIDIA driver error this panel has no description for.",
    advice: "Look the code up in NVIDIA's Xid catalog; if it repeats, run GPU diagnostics.",
    resetRequired: false,
    severity: "warning",
  };
}
