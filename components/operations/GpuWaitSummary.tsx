/** In the restart dialog: what "Restart when its GPUs are free" would wait for, per GPU (MiB held, by which PIDs, live or exited). */
import { formatMiB } from "@/server/contract/format";
import { gpuWaitLine, gpuWaitTotalMiB, type GpuWaitItem } from "./gpuWaitPreview";

export function GpuWaitSummary({ items, kind }: { items: readonly GpuWaitItem[]; kind: "restart" | "start" }) {
  if (items.length === 0) return null;
  const total = gpuWaitTotalMiB(items);
  return (
    <div
      className="rounded-md border border-blue-300 bg-blue-50 px-3 py-2 text-blue-950 dark:border-blue-800 dark:bg-blue-950 dark:text-blue-100"
      data-testid="gpu-wait"
    >
      <p>
        <b>{kind === "restart" ? "Restart" : "Start"} when its GPUs are free</b>: {kind === "restart" ? "stop it, then wait" : "wait"} until its last run&apos;s{" "}
        {total == null ? "memory" : formatMiB(total)} is released, then start it — no polling ExecStartPre. It would wait for:
      </p>
      <ul className="mt-1 list-disc pl-5 text-xs tabular-nums">
        {items.map((w) => (
          <li key={w.uuid}>{gpuWaitLine(w)}</li>
        ))}
      </ul>
    </div>
  );
}
