"use client";
/** Removing a host added on this page, after saying what it does. */
import { useMutation } from "@tanstack/react-query";
import { dangerButton, ErrorNote, panelClass, secondaryButton } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import type { HostEntry } from "./hostsData";

export function HostRemovePanel({ host, onDone, onCancel }: { host: HostEntry; onDone: (name: string) => void; onCancel: () => void }) {
  const trpc = useTRPC();
  const remove = useMutation(trpc.hosts.remove.mutationOptions({ onSuccess: (r) => onDone(r.removed) }));
  return (
    <form
      className={panelClass}
      aria-label={`Remove ${host.name}`}
      onSubmit={(e) => {
        e.preventDefault();
        remove.mutate({ name: host.name });
      }}
    >
      <p className="text-sm">
        Remove <b className="font-mono">{host.name}</b>? The panel stops watching its agent and forgets its token; its units leave every page. The agent itself
        keeps running. The audit log keeps its entries.
      </p>
      {remove.error && <ErrorNote>{remove.error.message}</ErrorNote>}
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={dangerButton} disabled={remove.isPending} autoFocus>
          {remove.isPending ? "Removing…" : `Remove ${host.name}`}
        </button>
        <button type="button" className={secondaryButton} onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
