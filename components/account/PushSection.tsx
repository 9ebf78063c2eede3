"use client";
/**
 * "Notify this device" on the Account page: subscribes this browser to Web Push (public/sw.js
 * shows the notifications), removes it, and sends a test. Alerts then reach this phone or
 * desktop with their headline, host and unit; tapping one opens the unit's page. It says plainly
 * when it cannot work here: the page is not on HTTPS, or the browser has no push.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { useTRPC } from "@/components/trpc";
import { formatTime } from "../auth/users/userText";
import { ErrorNote, OkNote, secondaryButton } from "../auth/users/notes";

const primaryButton =
  "min-h-10 rounded-md bg-zinc-900 px-3 py-1.5 text-sm font-semibold text-white hover:bg-zinc-700 disabled:opacity-50 dark:bg-zinc-100 dark:text-zinc-900";

type Support = { ok: true } | { ok: false; why: string };

function pushSupport(): Support {
  if (typeof window === "undefined") return { ok: false, why: "…" };
  if (!window.isSecureContext)
    return {
      ok: false,
      why: `This page is not on HTTPS (${window.location.origin}). Browsers offer push notifications only to HTTPS sites: put the panel behind TLS (see the README).`,
    };
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window))
    return {
      ok: false,
      why: "This browser cannot receive push notifications (on an iPhone: add the panel to the Home Screen first, then open it from there).",
    };
  return { ok: true };
}

/** base64url → the bytes PushManager.subscribe wants as applicationServerKey */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = base64url
    .replace(/-/g, "+")
    .replace(/_/g, "/")
    .padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  const bin = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function currentSubscription(): Promise<PushSubscription | null> {
  const reg = await navigator.serviceWorker.getRegistration("/");
  return (await reg?.pushManager.getSubscription()) ?? null;
}

export function PushSection() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const me = useQuery(trpc.session.me.queryOptions());
  const user = me.data?.user;
  const enabled = !!user && !me.data?.demo && user.via !== "token";
  const list = useQuery({ ...trpc.push.list.queryOptions(), enabled });
  const [support, setSupport] = useState<Support | null>(null);
  const [here, setHere] = useState<PushSubscription | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const refresh = useCallback(() => queryClient.invalidateQueries({ queryKey: trpc.push.list.queryKey() }), [queryClient, trpc]);
  const subscribe = useMutation(trpc.push.subscribe.mutationOptions());
  const unsubscribe = useMutation(trpc.push.unsubscribe.mutationOptions());
  const test = useMutation(trpc.push.test.mutationOptions());

  useEffect(() => {
    const s = pushSupport();
    // eslint-disable-next-line react-hooks/set-state-in-effect -- what the browser supports is known only in the browser
    setSupport(s);
    if (s.ok) void currentSubscription().then(setHere, () => setHere(null));
  }, []);

  if (!enabled) return null;

  const run = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(await what());
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
      void refresh();
    }
  };

  const turnOn = () =>
    run(async () => {
      const permission = await Notification.requestPermission();
      if (permission !== "granted") throw new Error("Notifications are blocked for this site; allow them in the browser's site settings, then try again.");
      const { publicKey } = await queryClient.fetchQuery(trpc.push.vapidPublicKey.queryOptions());
      await navigator.serviceWorker.register("/sw.js", { scope: "/" });
      const reg = await navigator.serviceWorker.ready;
      const sub =
        (await reg.pushManager.getSubscription()) ?? (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) }));
      await subscribe.mutateAsync({ subscription: sub.toJSON() as Parameters<typeof subscribe.mutateAsync>[0]["subscription"] });
      setHere(sub);
      return "This device will be notified of alerts.";
    });

  const turnOff = () =>
    run(async () => {
      const sub = here ?? (await currentSubscription());
      if (sub) {
        await unsubscribe.mutateAsync({ endpoint: sub.endpoint });
        await sub.unsubscribe();
      }
      setHere(null);
      return "This device will not be notified any more.";
    });

  const sendTest = () =>
    run(async () => {
      const r = await test.mutateAsync();
      return `A test notification is on its way to ${r.devices === 1 ? "your device" : `your ${r.devices} devices`}.`;
    });

  const devices = list.data?.devices ?? [];
  return (
    <section aria-labelledby="push-heading" className="space-y-3 rounded-lg border border-zinc-200 p-3 sm:p-4 dark:border-zinc-800" data-testid="push-section">
      <h2 id="push-heading" className="text-base font-semibold">
        Notify this device
      </h2>
      <p className="text-sm text-zinc-600 dark:text-zinc-400">
        Alerts as push notifications on this phone or computer, with what failed and why; tap one to open the unit. No other app needed.
      </p>
      {list.data && !list.data.enabled && <p className="text-sm text-zinc-500 dark:text-zinc-400">Push notifications are turned off on this panel.</p>}
      {support && !support.ok && (
        <p
          role="note"
          data-testid="push-unsupported"
          className="rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-950 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
        >
          {support.why}
        </p>
      )}
      {error && <ErrorNote>{error}</ErrorNote>}
      {done && <OkNote>{done}</OkNote>}
      {support?.ok && list.data?.enabled && (
        <div className="flex flex-wrap gap-2">
          {here ? (
            <button type="button" className={secondaryButton} disabled={busy} onClick={() => void turnOff()}>
              Stop notifying this device
            </button>
          ) : (
            <button type="button" className={primaryButton} disabled={busy} onClick={() => void turnOn()}>
              Notify this device
            </button>
          )}
          {devices.length > 0 && (
            <button type="button" className={secondaryButton} disabled={busy} onClick={() => void sendTest()}>
              Send a test
            </button>
          )}
        </div>
      )}
      {devices.length > 0 && (
        <ul className="space-y-1 text-xs text-zinc-500 dark:text-zinc-400" aria-label="Subscribed devices">
          {devices.map((d) => (
            <li key={d.id}>
              {d.userAgent ? d.userAgent.slice(0, 60) : "a browser"} · since {formatTime(d.createdAtMs)}
              {d.lastOkAtMs !== null && <> · last notified {formatTime(d.lastOkAtMs)}</>}
              {d.lastError && <span className="text-red-700 dark:text-red-300"> · {d.lastError}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
