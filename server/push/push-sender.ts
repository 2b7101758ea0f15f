/**
 * Sends Web Push notifications: each payload encrypted for one browser (aes128gcm) and signed
 * with the instance's VAPID key by `web-push`, then POSTed to the browser's push service (only
 * ever at a public address: `public-endpoint-post.ts`). A subscription the service calls gone (404, 410) is deleted; other failures are
 * logged and the subscription kept. Never throws: a push is a courtesy, the inbox is the record.
 */
import webpush from "web-push";
import type { Db } from "@/server/db/client";
import { deleteGonePushSubscription, listPushSubscriptions, readPushSettingsOf, type StoredPushSubscription } from "@/server/db/push-subscriptions";
import { isGoneStatus, type PushPayload, type PushSettings } from "@/server/domain/push/push-payload";
import { postToPushService } from "./public-endpoint-post";
import type { VapidKeys } from "./vapid-keys";

export interface PushLog {
  warn(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

export interface PushSenderDeps {
  db: Db;
  keys: VapidKeys;
  /** `mailto:` or `https:` contact for push services (RFC 8292 `sub`). */
  subject: string;
  log: PushLog;
  /** Tests only: push services on this host (normally refused: see `public-endpoint-post.ts`). */
  allowNonPublicEndpoints?: boolean;
}

/** What one send did, for tests and logs. */
export interface PushOutcome {
  sent: number;
  gone: number;
  failed: number;
}

/** How long a push service may take to answer. */
const timeoutMs = 10_000;

/** A VAPID subject push services accept: the public URL when it is https, else a mailto. */
export function vapidSubjectFor(publicUrl: string): string {
  return publicUrl.startsWith("https://") ? publicUrl : "mailto:conduit@invalid.example";
}

export class PushSender {
  private readonly pending = new Set<Promise<unknown>>();

  constructor(private readonly deps: PushSenderDeps) {}

  /**
   * Sends the payload to every browser of each user whose settings `wants`. Resolves when all
   * pushes are answered; callers in the sidecar's hot paths do not await it.
   */
  async sendToUsers(userIds: readonly string[], payload: PushPayload, wants: (s: PushSettings) => boolean): Promise<PushOutcome> {
    const outcome: PushOutcome = { sent: 0, gone: 0, failed: 0 };
    const unique = [...new Set(userIds)];
    if (unique.length === 0) return outcome;
    const work = (async () => {
      const settings = await readPushSettingsOf(this.deps.db, unique);
      const wanting = unique.filter((id) => wants(settings.get(id)!));
      const subs = await listPushSubscriptions(this.deps.db, wanting);
      await Promise.all(
        subs.map(async (sub) => {
          const result = await this.sendOne(sub, payload);
          outcome[result] += 1;
        }),
      );
      return outcome;
    })().catch((err: unknown) => {
      this.deps.log.warn({ err }, "sending push notifications failed");
      return outcome;
    });
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
    return work;
  }

  private async sendOne(sub: StoredPushSubscription, payload: PushPayload): Promise<keyof PushOutcome> {
    try {
      const details = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: sub.keys }, JSON.stringify(payload), {
        vapidDetails: { subject: this.deps.subject, publicKey: this.deps.keys.publicKey, privateKey: this.deps.keys.privateKey },
        TTL: payload.kind === "approval" ? 3600 : 24 * 3600,
        urgency: payload.kind === "approval" ? "high" : "normal",
        topic: topicOf(payload.tag),
      });
      const headers = Object.fromEntries(Object.entries(details.headers).map(([k, v]) => [k, String(v)]));
      // the request sets the length itself
      delete headers["Content-Length"];
      const res = await postToPushService(details.endpoint, {
        method: details.method,
        headers,
        body: details.body ? new Uint8Array(details.body) : null,
        timeoutMs,
        allowNonPublic: this.deps.allowNonPublicEndpoints,
      });
      if (res.status >= 200 && res.status < 300) return "sent";
      if (isGoneStatus(res.status)) {
        await deleteGonePushSubscription(this.deps.db, sub.id);
        this.deps.log.debug({ subscriptionId: sub.id, status: res.status }, "push subscription gone; deleted");
        return "gone";
      }
      this.deps.log.warn({ subscriptionId: sub.id, status: res.status, host: hostOf(sub.endpoint) }, "push service refused a notification");
      return "failed";
    } catch (err) {
      this.deps.log.warn({ err, subscriptionId: sub.id, host: hostOf(sub.endpoint) }, "push notification not delivered");
      return "failed";
    }
  }

  /** Waits for pushes under way (shutdown, tests). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
  }
}

/** The Topic header (≤ 32 URL-safe characters) lets a push service replace an undelivered older push of the same thing. */
function topicOf(tag: string): string {
  return tag.replace(/[^A-Za-z0-9_-]/g, "").slice(-32);
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return "?";
  }
}
