// Conduit's service worker: shows Web Push notifications (payloads from server/domain/push/push-payload.ts)
// and opens or focuses the page a notification is about. It caches nothing: Conduit is live data.
"use strict";

self.addEventListener("install", () => {
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

/** A same-origin URL for the path the payload names; anything else opens the inbox. */
function targetUrl(path) {
  try {
    const url = new URL(typeof path === "string" && path.startsWith("/") ? path : "/inbox", self.location.origin);
    return url.origin === self.location.origin ? url.href : new URL("/inbox", self.location.origin).href;
  } catch {
    return new URL("/inbox", self.location.origin).href;
  }
}

self.addEventListener("push", (event) => {
  let payload = {};
  try {
    payload = event.data ? event.data.json() : {};
  } catch {
    payload = { title: "Conduit", body: event.data ? event.data.text() : "" };
  }
  const title = typeof payload.title === "string" && payload.title ? payload.title : "Conduit";
  const options = {
    body: typeof payload.body === "string" ? payload.body : "",
    tag: typeof payload.tag === "string" ? payload.tag : undefined,
    icon: "/icons/icon-192.png",
    badge: "/icons/icon-192.png",
    data: { url: targetUrl(payload.url), kind: payload.kind },
    // an approval waits for someone: keep it on screen until it is handled
    requireInteraction: payload.kind === "approval",
  };
  event.waitUntil(
    self.registration.showNotification(title, options).then(() =>
      // tell open pages too (tests and an open tab's own badge use it)
      self.clients.matchAll({ type: "window", includeUncontrolled: true }).then((clients) => {
        for (const client of clients) client.postMessage({ type: "conduit:push", payload });
      }),
    ),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || targetUrl("/inbox");
  event.waitUntil(
    self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(async (clients) => {
      const exact = clients.find((c) => c.url === url);
      if (exact) return exact.focus();
      const any = clients.find((c) => new URL(c.url).origin === self.location.origin);
      if (any && "navigate" in any) {
        const focused = await any.focus();
        return focused.navigate(url);
      }
      return self.clients.openWindow(url);
    }),
  );
});
