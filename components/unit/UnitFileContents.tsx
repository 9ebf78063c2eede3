"use client";
/**
 * The unit file as UnitFileSection shows it once opened: the fragment and each drop-in as on
 * disk, the effective ExecStart=/Environment= systemd runs, secrets masked. Admins may reveal
 * the secrets (`reveal.unitFile`, audited), shown until the page is left.
 */
import { useMutation } from "@tanstack/react-query";
import { useTRPC } from "@/components/trpc";
import type { UnitFile } from "@/server/contract/journalSearch";

const pre = "max-h-80 overflow-auto rounded bg-zinc-50 p-2 font-mono text-xs leading-5 whitespace-pre-wrap break-all dark:bg-zinc-900";

export function UnitFileContents({
  host,
  name,
  file,
}: {
  host: string;
  name: string;
  file: { data?: UnitFile; isLoading: boolean; error: { message: string } | null };
}) {
  const trpc = useTRPC();
  const reveal = useMutation(trpc.reveal.unitFile.mutationOptions());
  const shown = reveal.data ?? file.data;
  return (
    <>
      {file.isLoading && <p className="text-zinc-500 dark:text-zinc-400">Reading the unit file…</p>}
      {file.error && <p className="text-red-700 dark:text-red-400">Unit file unavailable: {file.error.message}</p>}
      {shown && (
        <>
          {shown.needDaemonReload && (
            <p
              role="note"
              className="rounded border border-amber-300 bg-amber-50 px-2 py-1 text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-200"
            >
              The file on disk differs from what systemd runs: it changed since systemd loaded it. <code>systemctl daemon-reload</code> makes systemd read it
              (the next start uses it then).
            </p>
          )}
          <div>
            <h3 className="font-mono text-xs break-all text-zinc-500 dark:text-zinc-400">{shown.fragmentPath || "(no unit file: transient or generated)"}</h3>
            {shown.fragment !== null && <pre className={pre}>{shown.fragment}</pre>}
          </div>
          {shown.dropIns.map((d) => (
            <div key={d.path}>
              <h3 className="font-mono text-xs break-all text-zinc-500 dark:text-zinc-400">drop-in {d.path}</h3>
              {d.text !== null ? <pre className={pre}>{d.text}</pre> : <p className="text-zinc-500 dark:text-zinc-400">not read</p>}
            </div>
          ))}
          {shown.effective.length > 0 && (
            <div>
              <h3 className="text-xs text-zinc-500 dark:text-zinc-400">What systemd runs (effective, EnvironmentFile= contents are not shown)</h3>
              <pre className={pre} data-testid="unit-file-effective">
                {shown.effective.join("\n")}
              </pre>
            </div>
          )}
          {shown.problems.map((p) => (
            <p key={p} className="text-xs text-amber-700 dark:text-amber-400">
              {p}
            </p>
          ))}
          {!reveal.data && (
            <button
              type="button"
              className="rounded border border-zinc-300 px-2 py-1 text-xs hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
              onClick={() => reveal.mutate({ host, name })}
              disabled={reveal.isPending}
            >
              Reveal secrets (admins; recorded in the audit log)
            </button>
          )}
          {reveal.data && <p className="text-xs text-amber-700 dark:text-amber-400">Secrets revealed: this was recorded in the audit log.</p>}
          {reveal.error && <p className="text-xs text-red-700 dark:text-red-400">{reveal.error.message}</p>}
        </>
      )}
    </>
  );
}
