"use client";
/**
 * Who holds a GPU's memory: each process with its PID, name, unit (or "outside any unit"), memory
 * and state — exited ones still holding it marked, and memory no listed process explains. A
 * process whose memory nvidia-smi did not report says "not reported", never 0.
 */
import Link from "next/link";
import { hostUnitHref } from "@/components/fleet/links";
import { formatDuration, formatMiB } from "@/server/contract/format";
import type { GpuAttributed, GpuHolder } from "@/server/contract/types";

const STATE_TEXT = (h: GpuHolder) =>
  h.kind === "exited" ? "exited, still holding" : h.state === "zombie" ? "zombie" : h.state === "uninterruptible" ? "uninterruptible (D)" : h.state;

export function GpuHolders({ host, gpu: g, nowMs: now }: { host: string; gpu: GpuAttributed; nowMs: number }) {
  return (
    <div className="mt-2 overflow-x-auto">
      <table className="w-full text-left text-xs">
        <caption className="sr-only">Processes holding memory on GPU {g.index}</caption>
        <thead className="text-zinc-500 dark:text-zinc-400">
          <tr>
            <th className="py-1 pr-2 font-medium">PID</th>
            <th className="py-1 pr-2 font-medium">process</th>
            <th className="py-1 pr-2 font-medium">unit</th>
            <th className="py-1 pr-2 text-right font-medium">memory</th>
            <th className="py-1 font-medium">state</th>
          </tr>
        </thead>
        <tbody>
          {g.holders.map((h) => (
            <tr
              key={`${h.kind}-${h.pid}`}
              className={h.kind === "exited" ? "text-fuchsia-800 dark:text-fuchsia-300" : ""}
              data-testid="gpu-process"
              data-kind={h.kind}
            >
              <td className="py-0.5 pr-2 font-mono">{h.pid}</td>
              <td className="max-w-48 truncate py-0.5 pr-2 font-mono" title={h.cmdline.join(" ")}>
                {h.processName}
              </td>
              <td className="py-0.5 pr-2 font-mono">
                {h.unit ? (
                  <Link className="underline-offset-2 hover:underline" href={hostUnitHref(host, h.unit)}>
                    {h.unit}
                  </Link>
                ) : (
                  <span className="text-zinc-500 dark:text-zinc-400">outside any unit</span>
                )}
              </td>
              <td className="py-0.5 pr-2 text-right tabular-nums">{h.usedMiBUnknown ? "not reported" : formatMiB(h.usedMiB)}</td>
              <td className="py-0.5">
                {STATE_TEXT(h)}
                {h.kind === "exited" && h.exitedAtMs ? ` (${formatDuration(now - h.exitedAtMs)} ago)` : ""}
              </td>
            </tr>
          ))}
          {g.unattributedMiB > 0 && (
            <tr className="text-zinc-500 dark:text-zinc-400">
              <td className="py-0.5 pr-2">—</td>
              <td className="py-0.5 pr-2" colSpan={2}>
                no process listed by nvidia-smi
              </td>
              <td className="py-0.5 pr-2 text-right tabular-nums">{formatMiB(g.unattributedMiB)}</td>
              <td />
            </tr>
          )}
          {g.holders.length === 0 && g.unattributedMiB === 0 && (
            <tr>
              <td colSpan={5} className="py-1 text-zinc-500 dark:text-zinc-400">
                No process holds memory on this GPU.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
