/** The crash-loop badge of a unit row and the unit header; stronger (red, bold) when systemd will never stop the loop. */
import type { CrashLoopMarker } from "@/server/contract/faults";
import { crashLoopEndless, crashLoopText } from "./crashLoopText";

export function CrashLoopBadge({ crashLoop }: { crashLoop: CrashLoopMarker | undefined }) {
  if (!crashLoop) return null;
  const endless = crashLoopEndless(crashLoop);
  return (
    <span
      data-testid="crash-loop"
      data-endless={endless}
      className={`inline-flex items-center gap-1 rounded-md px-2 py-0.5 ring-1 ring-inset ${
        endless
          ? "bg-red-700 font-semibold text-white ring-red-900 dark:bg-red-800"
          : "bg-purple-100 text-purple-900 ring-purple-600/40 dark:bg-purple-950 dark:text-purple-200"
      }`}
    >
      <span aria-hidden="true">↻</span>
      {crashLoopText(crashLoop)}
    </span>
  );
}
