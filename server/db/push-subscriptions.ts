/**
 * Web Push subscriptions (one row per browser endpoint, owned by one user) and each user's
 * push settings. A subscription re-sent by another user moves to that user: the endpoint is
 * the browser's, and the browser is now signed in as them.
 */
import { defaultPushSettings, type PushSettings, type PushSubscriptionJson } from "@/server/domain/push/push-payload";
import type { Db } from "./client";

/** A stored subscription as web-push takes it. */
export interface StoredPushSubscription {
  id: string;
  userId: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** Subscriptions one account keeps: a new browser past it replaces the oldest (a subscribe never fails for it). */
export const maxPushSubscriptionsPerUser = 10;

/**
 * Stores (or re-owns) a browser's subscription for the user, stamped with the user's current
 * session version: bumping it (sign-out everywhere, password change, disable) silences it.
 * Bounded per account: subscriptions silenced that way are deleted, and past `max` the oldest
 * others go (`replaced` names how many).
 */
export async function savePushSubscription(
  db: Db,
  userId: string,
  sub: PushSubscriptionJson,
  userAgent: string | null,
  max = maxPushSubscriptionsPerUser,
): Promise<StoredPushSubscription & { replaced: number }> {
  const user = await db.user.findUniqueOrThrow({ where: { id: userId }, select: { sessionVersion: true } });
  const fields = { userId, p256dh: sub.keys.p256dh, auth: sub.keys.auth, userAgent: userAgent?.slice(0, 300) ?? null, sessionVersion: user.sessionVersion };
  const row = await db.pushSubscription.upsert({ where: { endpoint: sub.endpoint }, create: { endpoint: sub.endpoint, ...fields }, update: fields });
  // silenced ones are of no use; then the newest `max` stay (this one among them)
  await db.pushSubscription.deleteMany({ where: { userId, sessionVersion: { not: user.sessionVersion } } });
  const older = await db.pushSubscription.findMany({
    where: { userId, id: { not: row.id } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    skip: Math.max(0, max - 1),
    select: { id: true },
  });
  const replaced = older.length === 0 ? 0 : (await db.pushSubscription.deleteMany({ where: { id: { in: older.map((r) => r.id) } } })).count;
  return { ...toStored(row), replaced };
}

/** Deletes the user's subscription at the endpoint; true when there was one. Others' rows are never touched. */
export async function deletePushSubscription(db: Db, userId: string, endpoint: string): Promise<boolean> {
  const { count } = await db.pushSubscription.deleteMany({ where: { userId, endpoint } });
  return count > 0;
}

/** Deletes a subscription the push service called gone, whoever owns it. */
export async function deleteGonePushSubscription(db: Db, id: string): Promise<void> {
  await db.pushSubscription.deleteMany({ where: { id } });
}

/**
 * The subscriptions that may still be sent to: of enabled users, made under their current
 * session version (a browser signed out everywhere since then hears nothing more).
 */
export async function listPushSubscriptions(db: Db, userIds: readonly string[]): Promise<StoredPushSubscription[]> {
  if (userIds.length === 0) return [];
  const users = await db.user.findMany({ where: { id: { in: [...userIds] }, disabledAt: null }, select: { id: true, sessionVersion: true } });
  if (users.length === 0) return [];
  const current = new Map(users.map((u) => [u.id, u.sessionVersion]));
  const rows = await db.pushSubscription.findMany({ where: { userId: { in: [...current.keys()] } }, orderBy: { createdAt: "asc" } });
  return rows.filter((r) => current.get(r.userId) === r.sessionVersion).map(toStored);
}

/** How many browsers the user has subscribed since their last sign-out everywhere. */
export async function countPushSubscriptions(db: Db, userId: string): Promise<number> {
  const user = await db.user.findUnique({ where: { id: userId }, select: { sessionVersion: true } });
  return user ? db.pushSubscription.count({ where: { userId, sessionVersion: user.sessionVersion } }) : 0;
}

/** Whether the endpoint is one of the user's live subscriptions (made since their last sign-out everywhere). */
export async function hasPushSubscription(db: Db, userId: string, endpoint: string): Promise<boolean> {
  const [user, row] = await Promise.all([
    db.user.findUnique({ where: { id: userId }, select: { sessionVersion: true } }),
    db.pushSubscription.findUnique({ where: { endpoint }, select: { userId: true, sessionVersion: true } }),
  ]);
  return user !== null && row !== null && row.userId === userId && row.sessionVersion === user.sessionVersion;
}

/** The user's settings, or the defaults when never saved. */
export async function readPushSettings(db: Db, userId: string): Promise<PushSettings> {
  const row = await db.pushSetting.findUnique({ where: { userId } });
  return row ? { approvals: row.approvals, finishedTurns: row.finishedTurns } : { ...defaultPushSettings };
}

/** Settings of several users at once (defaults for those without a row). */
export async function readPushSettingsOf(db: Db, userIds: readonly string[]): Promise<Map<string, PushSettings>> {
  const rows = userIds.length === 0 ? [] : await db.pushSetting.findMany({ where: { userId: { in: [...userIds] } } });
  const found = new Map(rows.map((r) => [r.userId, { approvals: r.approvals, finishedTurns: r.finishedTurns }]));
  return new Map(userIds.map((id) => [id, found.get(id) ?? { ...defaultPushSettings }]));
}

/** Saves the user's settings. */
export async function writePushSettings(db: Db, userId: string, settings: PushSettings): Promise<PushSettings> {
  const row = await db.pushSetting.upsert({ where: { userId }, create: { userId, ...settings }, update: settings });
  return { approvals: row.approvals, finishedTurns: row.finishedTurns };
}

function toStored(row: { id: string; userId: string; endpoint: string; p256dh: string; auth: string }): StoredPushSubscription {
  return { id: row.id, userId: row.userId, endpoint: row.endpoint, keys: { p256dh: row.p256dh, auth: row.auth } };
}
