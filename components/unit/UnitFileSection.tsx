"use client";
/**
 * The unit file, read-only: collapsed until opened (then `units.file` is asked once), the
 * fragment and each drop-in as on disk, the effective ExecStart=/Environment= systemd runs,
 * secrets masked; a warning when systemd needs a daemon-reload (the file on disk differs from
 * what it runs). Admins may reveal the secrets (`reveal.unitFile`, audited), shown until the page is left.
 */
import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";

const pre = "max-h-80 overflow-auto rounded bg-zinc-50 p-2 font-mono text-xs leading-5 whitespace-pre-wrap break-all dark:bg-zinc-900";

export function UnitFileSection({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const file = useQuery(trpc.units.file.queryOptions({ host, name }, { enabled: open, staleTime: 30_000 }));
  const reveal = useMutation(trpc.reveal.unitFile.mutationOptions());
  const shown = reveal.data ?? file.data;
  return (
    <details
      className="rounded-lg border border-zinc-200 dark:border-zinc-800"
      onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}
      data-testid="unit-file"
    >
      <summary className="cursor-pointer px-4 py-2 text-sm font-semibold">
        Unit file
        {file.data?.needDaemonReload && <span className="ml-2 text-xs font-normal text-amber-700 dark:text-amber-400">changed on disk</span>}
      </summary>
      <div className="space-y-3 border-t border-zinc-200 px-4 py-3 text-sm dark:border-zinc-800">
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
      </div>
    </details>
  );
}
