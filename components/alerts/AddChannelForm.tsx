"use client";
/** Adding a channel: its type, a name, its URL and the type's own fields. Secrets go in password fields and never come back. */
import { useMutation } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { buttonClass, inputClass } from "@/components/auth/shared";
import { Field } from "@/components/auth/users/fields";
import { ErrorNote } from "@/components/auth/users/notes";
import { useTRPC } from "@/components/trpc";
import type { AddChannelInput, ChannelType } from "@/server/contract/alerts";

const URL_HINTS: Record<ChannelType, string> = {
  webhook: "Receives the gpudeck.alert.v1 JSON. The URL is kept secret (it often carries a token).",
  slack: "A Slack (or Mattermost) incoming webhook URL.",
  ntfy: "The topic's URL, e.g. https://ntfy.sh/my-alerts.",
  email: "The mail server: smtp://mail.example:587 (STARTTLS) or smtps://mail.example:465.",
};

const EMPTY = { type: "webhook" as ChannelType, name: "", url: "", token: "", from: "", to: "", username: "", password: "" };

function toInput(d: typeof EMPTY): AddChannelInput {
  const base = { name: d.name.trim(), url: d.url.trim() };
  if (d.type === "ntfy") return { type: "ntfy", ...base, token: d.token || undefined };
  if (d.type === "email") {
    const to = d.to.split(/[,\s]+/).filter(Boolean);
    return { type: "email", ...base, from: d.from.trim(), to, username: d.username.trim() || undefined, password: d.password || undefined };
  }
  return { type: d.type, ...base };
}

export function AddChannelForm({ onAdded }: { onAdded: () => void }) {
  const trpc = useTRPC();
  const [d, setD] = useState(EMPTY);
  const add = useMutation(trpc.alerts.channels.add.mutationOptions({ onSuccess: () => (setD(EMPTY), onAdded()) }));
  const set = (c: Partial<typeof EMPTY>) => setD({ ...d, ...c });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate(toInput(d));
  };
  return (
    <form
      onSubmit={submit}
      aria-label="Add channel"
      className="grid grid-cols-1 gap-3 rounded-lg border border-zinc-200 p-3 sm:grid-cols-3 dark:border-zinc-800"
    >
      <Field label="Type">
        {(f) => (
          <select {...f} className={inputClass} name="type" value={d.type} onChange={(e) => set({ type: e.target.value as ChannelType })}>
            <option value="webhook">Webhook (JSON)</option>
            <option value="slack">Slack-compatible</option>
            <option value="ntfy">ntfy</option>
            <option value="email">Email (SMTP)</option>
          </select>
        )}
      </Field>
      <Field label="Name">
        {(f) => <input {...f} className={inputClass} name="name" required maxLength={64} value={d.name} onChange={(e) => set({ name: e.target.value })} />}
      </Field>
      <Field label="URL" hint={URL_HINTS[d.type]}>
        {(f) => (
          <input
            {...f}
            className={inputClass}
            name="url"
            type="password"
            autoComplete="off"
            required
            value={d.url}
            onChange={(e) => set({ url: e.target.value })}
          />
        )}
      </Field>
      {d.type === "ntfy" && (
        <Field label="Access token" hint="Optional; never shown again.">
          {(f) => (
            <input
              {...f}
              className={inputClass}
              name="token"
              type="password"
              autoComplete="new-password"
              value={d.token}
              onChange={(e) => set({ token: e.target.value })}
            />
          )}
        </Field>
      )}
      {d.type === "email" && (
        <>
          <Field label="From">
            {(f) => <input {...f} className={inputClass} name="from" type="email" required value={d.from} onChange={(e) => set({ from: e.target.value })} />}
          </Field>
          <Field label="To" hint="Addresses, separated by commas">
            {(f) => <input {...f} className={inputClass} name="to" required value={d.to} onChange={(e) => set({ to: e.target.value })} />}
          </Field>
          <Field label="User name" hint="Optional">
            {(f) => (
              <input {...f} className={inputClass} name="username" autoComplete="off" value={d.username} onChange={(e) => set({ username: e.target.value })} />
            )}
          </Field>
          <Field label="Password" hint="Optional; never shown again.">
            {(f) => (
              <input
                {...f}
                className={inputClass}
                name="password"
                type="password"
                autoComplete="new-password"
                value={d.password}
                onChange={(e) => set({ password: e.target.value })}
              />
            )}
          </Field>
        </>
      )}
      <div className="sm:col-span-3">
        <button type="submit" className={buttonClass} disabled={add.isPending}>
          {add.isPending ? "Adding…" : "Add channel"}
        </button>
      </div>
      {add.error && (
        <div className="sm:col-span-3">
          <ErrorNote testId="add-channel-error">{add.error.message}</ErrorNote>
        </div>
      )}
    </form>
  );
}
