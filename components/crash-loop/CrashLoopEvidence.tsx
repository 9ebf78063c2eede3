/**
 * The evidence "Stop the loop" shows before it acts: each automatic restart with the result and
 * exit of the run that ended, the Restart= and start-limit settings (and why they never stop it),
 * and the last line the service itself wrote.
 */
import { formatDurationWords, formatTime, formatUsecSetting } from "@/server/contract/format";
import type { CrashLoopReport } from "@/server/contract/faults";
import { JOURNAL_HIDDEN } from "@/server/contract/roleViews";
import { crashLoopEndless } from "./crashLoopText";

const RESTARTS_SHOWN = 10;

export function CrashLoopEvidence({ report }: { report: CrashLoopReport }) {
  const shown = report.restarts.slice(-RESTARTS_SHOWN);
  const m = report.marker;
  return (
    <div className="space-y-2" data-testid="crash-loop-evidence">
      {m ? (
        <p>
          {`It restarted ${m.restarts === 1 ? "once" : `${m.restarts} times`} in ${formatDurationWords(m.windowMs)} (rule ${m.rule}).`}
          {crashLoopEndless(m) && (
            <b className="text-red-800 dark:text-red-300">
              {" "}
              systemd&apos;s start limit ({report.startLimitBurst} starts in {formatUsecSetting(report.startLimitIntervalUsec)}) can never end it: with Restart=
              {report.restart} every {formatUsecSetting(report.restartUsec)}, fewer starts than that fall in the interval.
            </b>
          )}
        </p>
      ) : (
        <p>It does not restart in a loop right now.</p>
      )}
      <p className="text-xs">
        Restart={report.restart} · RestartSec={formatUsecSetting(report.restartUsec)} · StartLimitBurst={report.startLimitBurst} · StartLimitIntervalSec=
        {formatUsecSetting(report.startLimitIntervalUsec)}
      </p>
      {shown.length > 0 && (
        <table className="w-full text-left text-xs tabular-nums">
          <caption className="text-left font-medium">
            {report.restarts.length > shown.length ? `The last ${shown.length} of ${report.restarts.length} restarts` : "Restarts"}
          </caption>
          <thead>
            <tr>
              <th scope="col" className="pr-2 font-medium">
                At
              </th>
              <th scope="col" className="pr-2 font-medium">
                Run ended
              </th>
              <th scope="col" className="font-medium">
                Exit
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((r) => (
              <tr key={r.atUsec}>
                <td className="pr-2">{formatTime(r.atUsec / 1000)}</td>
                <td className="pr-2">{r.result}</td>
                <td>{r.exit ?? "not in the journal"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {report.lastLogLine && (
        <p className="text-xs">
          Last line it wrote (at {formatTime(report.lastLogLine.atUsec / 1000)}):{" "}
          <code className="whitespace-pre-wrap break-all">{report.lastLogLine.message}</code>
        </p>
      )}
      {!report.lastLogLine && report.lastLogLineHidden && (
        <p className="text-xs text-zinc-600 dark:text-zinc-400" data-testid="last-line-hidden">
          Last line it wrote: {JOURNAL_HIDDEN}
        </p>
      )}
      <p>
        Stop the loop stops the unit, then resets its failed state (and systemd&apos;s start-limit counter), so nothing restarts it until someone starts it.
      </p>
    </div>
  );
}
