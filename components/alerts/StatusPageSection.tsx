"use client";
/**
 * The stakeholders' status page (admins): on or off, public or behind a link with a token
 * ("New link" shows the token once; the old link stops working), host names shown or not, and
 * named services (one per line: "Kimi K2.5 chat = gpu-a:vllm-kimi-k25.service").
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { ErrorNote, OkNote, secondaryButton } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import { groupsToText, textToGroups } from "./alertTexts";

export function StatusPageSection() {
  const trpc = useTRPC();
  const qc = useQueryClient();
  const settings = useQuery(trpc.statusPage.get.queryOptions());
  const refresh = () => qc.invalidateQueries({ queryKey: trpc.statusPage.get.queryKey() });
  const update = useMutation(trpc.statusPage.update.mutationOptions({ onSuccess: () => void refresh() }));
  const rotate = useMutation(trpc.statusPage.rotateToken.mutationOptions({ onSuccess: () => void refresh() }));
  // null: not edited, the stored services show
  const [draft, setDraft] = useState<string | null>(null);
  const [groupError, setGroupError] = useState<string | null>(null);
  const groups = draft ?? (settings.data ? groupsToText(settings.data.groups) : "");
  const s = settings.data;
  const saveGroups = () => {
    const parsed = textToGroups(groups);
    if ("error" in parsed) return setGroupError(parsed.error);
    setGroupError(null);
    update.mutate({ groups: parsed.groups }, { onSuccess: () => setDraft(null) });
  };
  return (
    <section aria-labelledby="status-page-heading" className="space-y-3">
      <h2 id="status-page-heading" className="text-base font-semibold">
        Status page
      </h2>
      {settings.error && <ErrorNote>{settings.error.message}</ErrorNote>}
      {s && (
        <div className="space-y-3 rounded-lg border border-zinc-200 p-3 text-sm dark:border-zinc-800">
          <p>
            {s.enabled ? (s.public ? "On, public: " : "On, for those with the link: ") : "Off. "}
            {/* a route handler, not a page of this app: a full navigation */}
            {/* eslint-disable-next-line @next/next/no-html-link-for-pages */}
            <a className="text-blue-700 hover:underline dark:text-blue-400" href="/status">
              {s.url}
            </a>
            {s.tokenHint && <span className="text-zinc-500 dark:text-zinc-400"> (link token {s.tokenHint})</span>}
            {s.fromEnvironment && <span className="text-zinc-500 dark:text-zinc-400"> GPUDECK_STATUS_TOKEN keeps it on.</span>}
          </p>
          <div className="flex flex-wrap gap-2">
            <button type="button" className={secondaryButton} disabled={update.isPending} onClick={() => update.mutate({ enabled: !s.enabled })}>
              {s.enabled ? "Turn off" : "Turn on"}
            </button>
            <button type="button" className={secondaryButton} disabled={update.isPending} onClick={() => update.mutate({ public: !s.public })}>
              {s.public ? "Require the link" : "Make public"}
            </button>
            <button type="button" className={secondaryButton} disabled={update.isPending} onClick={() => update.mutate({ showHosts: !s.showHosts })}>
              {s.showHosts ? "Hide host names" : "Show host names"}
            </button>
            <button type="button" className={secondaryButton} disabled={rotate.isPending} onClick={() => rotate.mutate()}>
              {s.tokenHint ? "New link (the old one stops working)" : "Make a link"}
            </button>
          </div>
          {rotate.data && (
            <OkNote>
              The link, shown this once: <code className="break-all">{rotate.data.url}</code>
            </OkNote>
          )}
          <label className="block">
            <span className="mb-1 block text-xs font-medium text-zinc-600 dark:text-zinc-400">Services (empty: every unit under its description)</span>
            <textarea
              className={`${inputClass} min-h-24 font-mono`}
              name="groups"
              spellCheck={false}
              placeholder="Kimi K2.5 chat = gpu-a:vllm-kimi-k25.service"
              value={groups}
              onChange={(e) => setDraft(e.target.value)}
            />
          </label>
          <button type="button" className={buttonClass} disabled={update.isPending} onClick={saveGroups}>
            Save services
          </button>
          {(groupError || update.error || rotate.error) && <ErrorNote>{groupError ?? update.error?.message ?? rotate.error?.message}</ErrorNote>}
        </div>
      )}
    </section>
  );
}
