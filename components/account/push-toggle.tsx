"use client";

import { sendForError, sendJson } from "@/components/send-json";
import { useEffect, useState } from "react";

type Settings = { approvals: boolean; finishedTurns: boolean };

/** What this browser can do about notifications; anything but "ready" is said next to the toggle. */
type Capability = "checking" | "ready" | "insecure" | "unsupported" | "denied" | "no-worker";

const capabilityNotes: Record<Exclude<Capability, "ready" | "checking">, string> = {
  insecure: "This page is not on a secure origin (HTTPS or localhost), so this browser cannot receive notifications.",
  unsupported: "This browser cannot receive push notifications (no Push API or service workers).",
  denied: "Notifications are blocked for this site in the browser's settings; allow them there to turn this on.",
  "no-worker": "The service worker is not running (it is only registered in production builds), so notifications cannot be shown.",
};

/** Resolves the active service worker registration, or undefined when none becomes ready soon. */
async function readyRegistration(timeoutMs: number): Promise<ServiceWorkerRegistration | undefined> {
  return Promise.race([
    navigator.serviceWorker.ready,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs)),
  ]);
}

function base64UrlToBytes(value: string): Uint8Array<ArrayBuffer> {
  const padded = value.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - (value.length % 4)) % 4);
  const raw = atob(padded);
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

/**
 * Push notifications for this browser, and what to push. The toggle claims "on" only when this
 * browser holds a push subscription that the server stored; a browser that cannot show them
 * says why instead.
 */
export function PushToggle({ publicKey, initialSettings }: { publicKey: string; initialSettings: Settings }) {
  const [capability, setCapability] = useState<Capability>("checking");
  const [subscribed, setSubscribed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [settings, setSettings] = useState(initialSettings);
  const [settingsError, setSettingsError] = useState<string>();

  useEffect(() => {
    let cancelled = false;
    void (async () => {
      const next = await detect();
      if (cancelled) return;
      setCapability(next.capability);
      setSubscribed(next.subscribed);
    })();
    return () => {
      cancelled = true;
    };
  }, []);

  async function detect(): Promise<{ capability: Capability; subscribed: boolean }> {
    if (!window.isSecureContext) return { capability: "insecure", subscribed: false };
    if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) return { capability: "unsupported", subscribed: false };
    if (Notification.permission === "denied") return { capability: "denied", subscribed: false };
    const registration = await navigator.serviceWorker.getRegistration();
    if (!registration) return { capability: "no-worker", subscribed: false };
    const existing = await registration.pushManager.getSubscription().catch(() => null);
    if (existing === null || Notification.permission !== "granted") return { capability: "ready", subscribed: false };
    // "on" only when the server still sends to it (a sign-out everywhere silences older subscriptions)
    const known = await sendJson<{ thisBrowser?: boolean }>(`/api/account/push?endpoint=${encodeURIComponent(existing.endpoint)}`, "GET");
    return { capability: "ready", subscribed: known.ok && known.data.thisBrowser === true };
  }

  async function turnOn() {
    const permission = await Notification.requestPermission();
    if (permission !== "granted") {
      setCapability(permission === "denied" ? "denied" : "ready");
      if (permission !== "denied") setError("Notifications were not allowed.");
      return;
    }
    const registration = await readyRegistration(5000);
    if (!registration) return setCapability("no-worker");
    const existing = await registration.pushManager.getSubscription();
    const subscription =
      existing ?? (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64UrlToBytes(publicKey) }));
    const failed = await sendForError("/api/account/push/subscriptions", "POST", subscription.toJSON());
    if (failed) {
      // the server does not know this subscription: do not leave one the toggle would call off
      if (!existing) await subscription.unsubscribe().catch(() => false);
      return setError(failed);
    }
    setSubscribed(true);
  }

  async function turnOff() {
    const registration = await navigator.serviceWorker.getRegistration();
    const subscription = await registration?.pushManager.getSubscription();
    if (!subscription) return setSubscribed(false);
    const result = await sendJson("/api/account/push/subscriptions", "DELETE", { endpoint: subscription.endpoint });
    if (!result.ok) return setError(result.message);
    await subscription.unsubscribe().catch(() => false);
    setSubscribed(false);
  }

  async function onToggle() {
    setBusy(true);
    setError(undefined);
    try {
      await (subscribed ? turnOff() : turnOn());
    } catch (err) {
      setError(err instanceof Error ? `This browser refused: ${err.message}` : "This browser refused to subscribe.");
    } finally {
      setBusy(false);
    }
  }

  async function onSetting(key: keyof Settings, value: boolean) {
    const next = { ...settings, [key]: value };
    const previous = settings;
    setSettings(next);
    setSettingsError(undefined);
    const failed = await sendForError("/api/account/push", "PATCH", next);
    if (failed) {
      setSettings(previous);
      setSettingsError(failed);
    }
  }

  const usable = capability === "ready";
  const on = usable && subscribed;
  const note = capability === "checking" || capability === "ready" ? undefined : capabilityNotes[capability];
  return (
    <section className="card space-y-3" aria-label="Notifications">
      <h2 className="text-sm font-medium text-zinc-500">Notifications on this device</h2>
      <div className="flex flex-wrap items-center gap-3">
        <button
          type="button"
          role="switch"
          aria-checked={on}
          aria-describedby="push-status"
          data-testid="push-toggle"
          data-state={capability === "checking" ? "checking" : on ? "on" : usable ? "off" : "unavailable"}
          disabled={!usable || busy}
          onClick={() => void onToggle()}
          className={`relative inline-flex h-6 w-11 shrink-0 items-center rounded-full transition disabled:cursor-not-allowed disabled:opacity-50 ${on ? "bg-emerald-600" : "bg-zinc-300 dark:bg-zinc-700"}`}
        >
          <span className="sr-only">Push notifications</span>
          <span className={`inline-block h-5 w-5 rounded-full bg-white shadow transition ${on ? "translate-x-5" : "translate-x-0.5"}`} />
        </button>
        <p id="push-status" data-testid="push-status" className="min-w-0 flex-1 text-sm" aria-live="polite">
          {capability === "checking"
            ? "Checking what this browser can do…"
            : note ?? (busy ? "Working…" : on ? "On: this browser gets notifications." : "Off for this browser.")}
        </p>
      </div>
      {error && (
        <p role="alert" className="text-sm text-red-600" data-testid="push-error">
          {error}
        </p>
      )}
      <fieldset className="space-y-1 text-sm">
        <legend className="sr-only">What to notify</legend>
        <label className="flex items-center gap-2">
          <input type="checkbox" data-testid="push-approvals" checked={settings.approvals} onChange={(e) => void onSetting("approvals", e.target.checked)} />
          Approvals routed to me
        </label>
        <label className="flex items-center gap-2">
          <input
            type="checkbox"
            data-testid="push-finished-turns"
            checked={settings.finishedTurns}
            onChange={(e) => void onSetting("finishedTurns", e.target.checked)}
          />
          My turns that finish while I&apos;m not on the session&apos;s page
        </label>
        {settingsError && (
          <p role="alert" className="text-red-600">
            {settingsError}
          </p>
        )}
      </fieldset>
    </section>
  );
}
