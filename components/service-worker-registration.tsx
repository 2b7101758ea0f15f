"use client";

import { useEffect } from "react";

/**
 * Registers `/sw.js` (push notifications) in production builds. Development builds skip it: a
 * worker that outlives a dev server's reloads only gets in the way there.
 */
export function ServiceWorkerRegistration() {
  useEffect(() => {
    if (process.env.NODE_ENV !== "production" || !("serviceWorker" in navigator) || !window.isSecureContext) return;
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {
      // the account page's push-toggle says notifications are unavailable when no worker runs
    });
  }, []);
  return null;
}
