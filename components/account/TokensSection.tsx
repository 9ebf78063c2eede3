"use client";
/**
 * API tokens for scripts and CI (`gpudeck restart …`, or any client with `Authorization: Bearer`):
 * on the Account page, your own; on the Users page (`admin`), everyone's, with service tokens.
 * The list never shows a token, only what it may do and when it was last used; revoking takes
 * effect at once on every replica and ends the token's open streams.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "@/components/trpc";
import { formatTime } from "../auth/users/userText";
import { dangerButton, ErrorNote } from "../auth/users/notes";
import { NewTokenForm } from "./NewTokenForm";

export function TokensSection({ admin = false }: { admin?: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.session.me.queryOptions());
  const user = me.data?.user;
  const enabled = !!user && !me.data?.demo && user.via !== "token" && (!admin || user.role === "admin");
  const list = useQuery({ ...trpc.tokens.list.queryOptions(admin ? { all: true } : undefined), enabled });
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey() });
  const [now] = useState(() => Date.now());
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSuccess: () => void refresh() }));
  if (!enabled) return null;
  const tokens = list.data?.tokens ?? [];
  return (
    <section
      aria-labelledby="tokens-heading"
      className="space-y-3 rounded-lg border border-zinc-200 p-3 sm:p-4 dark:border-zinc-800"
      data-testid="tokens-section"
    >
      <h2 id="tokens-heading" className="text-base font-semibold">
        {admin ? "API tokens (everyone's)" : "API tokens"}
      </h2>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        For scripts and CI: <code>GPUDECK_URL=… GPUDECK_TOKEN=gdk_… gpudeck restart HOST:UNIT --reason …</code>. A token acts with the rights it was given, and
        every action is audited as “{admin ? "owner" : user.name} (token name)”.
      </p>
      {list.error && <ErrorNote>{list.error.message}</ErrorNote>}
      {revoke.error && <ErrorNote>{revoke.error.message}</ErrorNote>}
      {tokens.length === 0 && !list.isPending && <p className="text-sm text-zinc-500 dark:text-zinc-400">No tokens yet.</p>}
      <ul className="space-y-2" aria-label="API tokens">
        {tokens.map((t) => (
          <li key={t.id} className="flex flex-wrap items-start justify-between gap-2 rounded-md border border-zinc-200 p-2 text-sm dark:border-zinc-800">
            <div className="min-w-0 space-y-0.5">
              <div className="font-medium break-all">
                {t.name}
                {t.kind === "service" && <span className="ml-2 rounded bg-zinc-200 px-1.5 py-0.5 text-xs dark:bg-zinc-800">service</span>}
              </div>
              <div className="text-xs text-zinc-600 dark:text-zinc-400">
                {admin && <>{t.owner} · </>}
                {t.role}
                {t.units.length > 0 && <> on {t.units.join(", ")}</>} · made {formatTime(t.createdAt)} · {t.expiresAt <= now ? "expired" : "expires"}{" "}
                {formatTime(t.expiresAt)} · last used {t.lastUsedAt === null ? "never" : formatTime(t.lastUsedAt)}
              </div>
            </div>
            <button
              type="button"
              className={dangerButton}
              disabled={revoke.isPending}
              aria-label={`Revoke token ${t.name}`}
              onClick={() => {
                if (window.confirm(`Revoke the token ${t.name}? Scripts using it stop working at once.`)) revoke.mutate({ id: t.id });
              }}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <NewTokenForm admin={admin && user.role === "admin"} myRole={user.role} onMade={() => void refresh()} />
    </section>
  );
}
