/*
 * gpudeck's service worker: push notifications only. It shows what the panel pushes
 * (gpudeck.push.v1: title, the alert's headline, host and unit) and, when tapped, opens the
 * unit's page; "Acknowledge" calls alerts.ack with the session cookie. It has no fetch handler
 * and caches nothing: every page and every API answer comes from the panel, live.
 */
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "gpudeck", body: event.data ? event.data.text() : "" };
  }
  const where = [data.host, data.unit].filter(Boolean).join(" · ");
  const body = [data.body, where].filter(Boolean).join("\n");
  const actions = data.alertId ? [{ action: "ack", title: "Acknowledge" }] : [];
  event.waitUntil(
    self.registration.showNotification(data.title || "gpudeck", {
      body,
      tag: data.tag || undefined,
      renotify: Boolean(data.tag) && data.state === "firing",
      icon: "/icon-192.png",
      badge: "/icon-192.png",
      data: { url: data.url || "/", alertId: data.alertId || null },
      actions,
    }),
  );
});

/** A path on this panel; anything else (another origin) becomes the panel's home page. */
function panelUrl(url) {
  try {
    const u = new URL(url || "/", self.location.origin);
    return u.origin === self.location.origin ? u.href : new URL("/", self.location.origin).href;
  } catch {
    return new URL("/", self.location.origin).href;
  }
}

async function openPage(href) {
  const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const c of open) {
    if (c.url === href && "focus" in c) return c.focus();
  }
  return self.clients.openWindow(href);
}

async function acknowledge(alertId, href) {
  try {
    const res = await fetch("/api/trpc/alerts.ack", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: alertId }),
    });
    if (!res.ok) throw new Error(String(res.status));
    await self.registration.showNotification("Acknowledged", { body: "You acknowledged this alert.", tag: `ack-${alertId}`, icon: "/icon-192.png" });
  } catch {
    // not signed in on this device, or the panel refused: the page says why and offers the button
    await openPage(href);
  }
}

self.addEventListener("notificationclick", (event) => {
  const n = event.notification;
  n.close();
  const href = panelUrl(n.data && n.data.url);
  const alertId = n.data && n.data.alertId;
  event.waitUntil(event.action === "ack" && alertId ? acknowledge(alertId, href) : openPage(href));
});
