// Web Push subscriptions are bounded per account: a new browser past the bound replaces the
// oldest, and subscriptions silenced by a sign-out everywhere are dropped on the next subscribe.
import { expect } from "vitest";
import { countPushSubscriptions, hasPushSubscription, savePushSubscription } from "./push-subscriptions";
import { itOnBothProviders } from "./test-support";

const keys = { p256dh: "BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM", auth: "tBHItJI5svbpez7KI4CCXg" };

itOnBothProviders("push subscriptions", "keeps at most the bound per account: the oldest is replaced, others' rows untouched", async (db) => {
  const ann = await db.user.create({ data: { email: "ann@example.test", name: "Ann" } });
  const bob = await db.user.create({ data: { email: "bob@example.test", name: "Bob" } });
  await savePushSubscription(db, bob.id, { endpoint: "https://push.example.test/bob", keys }, null);
  const saved: { replaced: number }[] = [];
  for (let i = 0; i < 4; i++) {
    saved.push(await savePushSubscription(db, ann.id, { endpoint: `https://push.example.test/ann-${i}`, keys }, null, 3));
    // distinct creation times, so "oldest" is well defined on both databases
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(saved.map((s) => s.replaced)).toEqual([0, 0, 0, 1]);
  expect(await countPushSubscriptions(db, ann.id)).toBe(3);
  expect(await hasPushSubscription(db, ann.id, "https://push.example.test/ann-0")).toBe(false);
  expect(await hasPushSubscription(db, ann.id, "https://push.example.test/ann-3")).toBe(true);
  // the same browser again replaces nothing
  expect((await savePushSubscription(db, ann.id, { endpoint: "https://push.example.test/ann-3", keys }, null, 3)).replaced).toBe(0);
  expect(await countPushSubscriptions(db, ann.id)).toBe(3);
  // signed out everywhere: the silenced ones go on the next subscribe, and do not count
  await db.user.update({ where: { id: ann.id }, data: { sessionVersion: { increment: 1 } } });
  await savePushSubscription(db, ann.id, { endpoint: "https://push.example.test/ann-new", keys }, null, 3);
  expect(await db.pushSubscription.count({ where: { userId: ann.id } })).toBe(1);
  expect(await hasPushSubscription(db, bob.id, "https://push.example.test/bob")).toBe(true);
});
