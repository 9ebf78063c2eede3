"use client";
/** The unit's systemd facts: what it runs, its processes, GPUs, timeouts and restart policy. */
import { useMemo, type ReactNode } from "react";
import { formatCmdline, formatDuration, formatUsecSetting } from "@/server/contract/format";
import type { ExecCommand, UnitDetail } from "@/server/contract/types";

export function UnitFacts({ detail, gpuText }: { detail: UnitDetail; gpuText: string }) {
  const rows: [string, ReactNode][] = useMemo(() => {
    const cmds = (list: ExecCommand[]) =>
      list.length === 0 ? (
        <span className="text-zinc-500 dark:text-zinc-400">none</span>
      ) : (
        list.map((c, i) => (
          <code key={i} className="block whitespace-pre-wrap break-all">
            {formatCmdline(c.argv, Number.POSITIVE_INFINITY)}
          </code>
        ))
      );
    return [
      ["ExecStartPre", cmds(detail.execStartPre)],
      ["ExecStart", cmds(detail.execStart)],
      ["ExecStopPost", cmds(detail.execStopPost)],
      [
        "Control process",
        detail.controlProcess ? (
          <code className="whitespace-pre-wrap break-all">
            PID {detail.controlProcess.pid}: {detail.controlProcess.cmdline.join(" ")}
          </code>
        ) : (
          <span className="text-zinc-500 dark:text-zinc-400">none</span>
        ),
      ],
      ["Main PID", detail.mainPid || <span className="text-zinc-500 dark:text-zinc-400">none</span>],
      ["GPUs", gpuText],
      ["Timeouts", `start ${formatUsecSetting(detail.timeoutStartUsec)} · stop ${formatUsecSetting(detail.timeoutStopUsec)}`],
      [
        "Restart",
        `${detail.restart}${detail.restart !== "no" ? ` after ${formatDuration(detail.restartUsec / 1000)}` : ""} · limit ${detail.startLimitBurst} starts / ${formatDuration(detail.startLimitIntervalUsec / 1000)}`,
      ],
      [
        "Unit file",
        <code key="f" className="break-all">
          {detail.fragmentPath || "—"}
        </code>,
      ],
      ["Load / file state", `${detail.loadState} / ${detail.unitFileState || "—"}`],
      [
        "Processes",
        detail.processes.length === 0 ? (
          <span className="text-zinc-500 dark:text-zinc-400">none</span>
        ) : (
          <ul>
            {detail.processes.map((p) => (
              <li key={p.pid}>
                <code className="break-all">
                  {p.pid} [{p.state}] {p.cmdline.join(" ")}
                </code>
              </li>
            ))}
          </ul>
        ),
      ],
    ];
  }, [detail, gpuText]);
  return (
    <section aria-labelledby="facts-heading" className="rounded-lg border border-zinc-200 dark:border-zinc-800">
      <h2 id="facts-heading" className="border-b border-zinc-200 px-4 py-2 text-sm font-semibold dark:border-zinc-800">
        Unit facts
      </h2>
      <dl className="grid grid-cols-1 gap-x-4 gap-y-2 px-4 py-3 text-sm sm:grid-cols-[10rem_1fr]">
        {rows.map(([k, v]) => (
          <div key={k} className="contents">
            <dt className="font-medium text-zinc-600 dark:text-zinc-400">{k}</dt>
            <dd className="min-w-0 text-xs sm:text-sm">{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
