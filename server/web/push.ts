/**
 * The signed-in person's Web Push: the instance's public VAPID key (browsers subscribe with
 * it), their subscribed browsers and their settings. Each change is audited; a person only ever
 * adds or removes their own browser's subscription.
 */
import { getDb } from "@/server/db/client";
import {
  countPushSubscriptions,
  deletePushSubscription,
  hasPushSubscription,
  readPushSettings,
  savePushSubscription,
  writePushSettings,
} from "@/server/db/push-subscriptions";
import type { PushSettings, PushSubscriptionJson } from "@/server/domain/push/push-payload";
import { getEnv } from "@/server/env/env";
import { loadVapidKeys } from "@/server/push/vapid-keys";
import type { CurrentUser } from "@/server/web/auth";

/** What the account page's push section needs. */
export interface PushState {
  publicKey: string;
  settings: PushSettings;
  /** Browsers this account has subscribed. */
  subscriptions: number;
  /** With `endpoint`: whether that browser's subscription is stored for this account and still live. */
  thisBrowser?: boolean;
}

export async function readPushState(user: CurrentUser, endpoint?: string): Promise<PushState> {
  const db = getDb();
  const [settings, subscriptions, thisBrowser] = await Promise.all([
    readPushSettings(db, user.id),
    countPushSubscriptions(db, user.id),
    endpoint === undefined ? undefined : hasPushSubscription(db, user.id, endpoint),
  ]);
  return { publicKey: loadVapidKeys(getEnv().CONDUIT_DATA_DIR).publicKey, settings, subscriptions, ...(thisBrowser === undefined ? {} : { thisBrowser }) };
}

export async function subscribePush(user: CurrentUser, sub: PushSubscriptionJson, userAgent: string | null): Promise<{ subscriptions: number }> {
  const db = getDb();
  const saved = await savePushSubscription(db, user.id, sub, userAgent);
  // `replaced`: the oldest of the account's subscriptions past its bound (maxPushSubscriptionsPerUser) went
  await db.auditLog.create({ data: { actorId: user.id, action: "push.subscribe", objectType: "user", objectId: user.id, details: JSON.stringify({ subscription: saved.id, host: new URL(sub.endpoint).host, ...(saved.replaced > 0 ? { replaced: saved.replaced } : {}) }) } });
  return { subscriptions: await countPushSubscriptions(db, user.id) };
}

export async function unsubscribePush(user: CurrentUser, endpoint: string): Promise<{ removed: boolean; subscriptions: number }> {
  const db = getDb();
  const removed = await deletePushSubscription(db, user.id, endpoint);
  if (removed) await db.auditLog.create({ data: { actorId: user.id, action: "push.unsubscribe", objectType: "user", objectId: user.id, details: JSON.stringify({ host: hostOf(endpoint) }) } });
  return { removed, subscriptions: await countPushSubscriptions(db, user.id) };
}

export async function updatePushSettings(user: CurrentUser, settings: PushSettings): Promise<PushSettings> {
  const db = getDb();
  const saved = await writePushSettings(db, user.id, settings);
  await db.auditLog.create({ data: { actorId: user.id, action: "push.settings", objectType: "user", objectId: user.id, details: JSON.stringify(saved) } });
  return saved;
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).host;
  } catch {
    return "?";
  }
}
