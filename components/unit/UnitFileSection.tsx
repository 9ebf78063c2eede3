"use client";
/**
 * The unit file, read-only: collapsed until opened (then `units.file` is asked once, and the code
 * that draws it, ./UnitFileContents.tsx, is downloaded). A warning when systemd needs a
 * daemon-reload (the file on disk differs from what it runs).
 */
import { useQuery } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { useTRPC } from "@/components/trpc";

const UnitFileContents = lazy(() => import("./UnitFileContents").then((m) => ({ default: m.UnitFileContents })));

export function UnitFileSection({ host, name }: { host: string; name: string }) {
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const file = useQuery(trpc.units.file.queryOptions({ host, name }, { enabled: open, staleTime: 30_000 }));
  return (
    <details
      className="rounded-lg border border-zinc-200 dark:border-zinc-800"
      onToggle={(e) => {
        // once opened it stays drawn (a revealed file is shown until the page is left)
        if ((e.target as HTMLDetailsElement).open) setOpen(true);
      }}
      data-testid="unit-file"
    >
      <summary className="cursor-pointer px-4 py-2 text-sm font-semibold">
        Unit file
        {file.data?.needDaemonReload && <span className="ml-2 text-xs font-normal text-amber-700 dark:text-amber-400">changed on disk</span>}
      </summary>
      <div className="space-y-3 border-t border-zinc-200 px-4 py-3 text-sm dark:border-zinc-800">
        {open && (
          <Suspense fallback={<p className="text-zinc-500 dark:text-zinc-400">Reading the unit file…</p>}>
            <UnitFileContents host={host} name={name} file={file} />
          </Suspense>
        )}
      </div>
    </details>
  );
}
