// The push path end to end against a local HTTP server playing the push service: the request
// carries a VAPID JWT signed by the instance's key, the body decrypts (aes128gcm, RFC 8291) with
// the browser's keys to the payload, and a 410 deletes the subscription.
import { createECDH, createPublicKey, randomBytes, verify } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { afterAll, beforeAll, expect } from "vitest";
import { countPushSubscriptions, hasPushSubscription, listPushSubscriptions, savePushSubscription, writePushSettings } from "@/server/db/push-subscriptions";
import { itOnBothProviders } from "@/server/db/test-support";
import { approvalPushPayload, ZPushPayload } from "@/server/domain/push/push-payload";
import { PushSender } from "./push-sender";
import { generateVapidKeys } from "./vapid-keys";

const ece = createRequire(import.meta.url)("http_ece") as {
  decrypt(buffer: Buffer, params: { version: string; privateKey: ReturnType<typeof createECDH>; authSecret: Buffer }): Buffer;
};

interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

let server: Server;
let base: string;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) });
      const status = req.url?.startsWith("/gone") ? 410 : req.url?.startsWith("/broken") ? 500 : 201;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** A browser's side of a subscription: its ECDH key pair and auth secret. */
function browserKeys() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const authSecret = randomBytes(16);
  return { ecdh, authSecret, keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: authSecret.toString("base64url") } };
}

/** Checks `Authorization: vapid t=<ES256 JWT>, k=<public key>` against the instance's key. */
function checkVapid(header: string | undefined, endpoint: string, publicKey: string, subject: string): void {
  const match = /^vapid t=([^,]+), k=([A-Za-z0-9_-]+)$/.exec(header ?? "");
  expect(match, `VAPID header: ${header}`).not.toBeNull();
  const [, jwt, k] = match!;
  expect(k).toBe(publicKey);
  const [head, claims, signature] = jwt!.split(".");
  const point = Buffer.from(publicKey, "base64url");
  const key = createPublicKey({
    key: { kty: "EC", crv: "P-256", x: point.subarray(1, 33).toString("base64url"), y: point.subarray(33).toString("base64url") },
    format: "jwk",
  });
  const ok = verify("sha256", Buffer.from(`${head}.${claims}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(signature!, "base64url"));
  expect(ok).toBe(true);
  const body = JSON.parse(Buffer.from(claims!, "base64url").toString()) as { aud: string; sub: string; exp: number };
  expect(body.aud).toBe(new URL(endpoint).origin);
  expect(body.sub).toBe(subject);
  expect(body.exp * 1000).toBeGreaterThan(Date.now());
}

itOnBothProviders("PushSender", "encrypts for the browser, signs with VAPID, deletes gone subscriptions, honours settings", async (db) => {
  received.length = 0;
  const [alice, bob] = await Promise.all(["alice", "bob"].map((name) => db.user.create({ data: { email: `${name}@example.test`, name } })));
  const vapid = generateVapidKeys();
  const subject = "mailto:ops@example.test";
  const warnings: string[] = [];
  const sender = new PushSender({ db, keys: vapid, subject, log: { warn: (_f, m) => warnings.push(m), debug: () => undefined }, allowNonPublicEndpoints: true });

  const phone = browserKeys();
  const laptop = browserKeys();
  const old = browserKeys();
  const bobs = browserKeys();
  await savePushSubscription(db, alice!.id, { endpoint: `${base}/ok/phone`, keys: phone.keys }, "phone");
  await savePushSubscription(db, alice!.id, { endpoint: `${base}/broken/laptop`, keys: laptop.keys }, null);
  await savePushSubscription(db, alice!.id, { endpoint: `${base}/gone/old`, keys: old.keys }, null);
  await savePushSubscription(db, bob!.id, { endpoint: `${base}/ok/bob`, keys: bobs.keys }, null);
  await writePushSettings(db, bob!.id, { approvals: false, finishedTurns: true });

  const payload = approvalPushPayload({
    id: "a1",
    sessionId: "s1",
    toolName: "Bash",
    input: { command: "rm -rf build" },
    sessionTitle: "Fix the build",
    workspace: { slug: "web", name: "Web" },
  });
  const outcome = await sender.sendToUsers([alice!.id, bob!.id], payload, (s) => s.approvals);
  expect(outcome).toEqual({ sent: 1, gone: 1, failed: 1 });
  // bob turned approvals off: nothing reached his endpoint
  expect(received.map((r) => r.path).sort()).toEqual(["/broken/laptop", "/gone/old", "/ok/phone"]);

  const delivered = received.find((r) => r.path === "/ok/phone")!;
  expect(delivered.headers["content-encoding"]).toBe("aes128gcm");
  expect(delivered.headers.ttl).toBe("3600");
  expect(delivered.headers.urgency).toBe("high");
  checkVapid(delivered.headers.authorization, `${base}/ok/phone`, vapid.publicKey, subject);
  // only the phone's keys open it
  const plain = ece.decrypt(delivered.body, { version: "aes128gcm", privateKey: phone.ecdh, authSecret: phone.authSecret });
  expect(ZPushPayload.parse(JSON.parse(plain.toString("utf8")))).toEqual({
    kind: "approval",
    title: "Approval needed in Web · Fix the build",
    body: "Bash: rm -rf build",
    url: "/w/web/s/s1",
    tag: "approval:a1",
  });
  expect(() => ece.decrypt(delivered.body, { version: "aes128gcm", privateKey: laptop.ecdh, authSecret: laptop.authSecret })).toThrow();

  // 410 deleted; 500 kept (and logged)
  const left = await listPushSubscriptions(db, [alice!.id, bob!.id]);
  expect(left.map((s) => s.endpoint).sort()).toEqual([`${base}/broken/laptop`, `${base}/ok/bob`, `${base}/ok/phone`]);
  expect(warnings).toContain("push service refused a notification");

  // a finished turn goes to bob, who wants those
  received.length = 0;
  const turn = await sender.sendToUsers([bob!.id], { ...payload, kind: "turn-finished", tag: "turn:s1" }, (s) => s.finishedTurns);
  expect(turn).toEqual({ sent: 1, gone: 0, failed: 0 });
  expect(received.map((r) => r.path)).toEqual(["/ok/bob"]);
  expect(received[0]!.headers.ttl).toBe(String(24 * 3600));

  // signed out everywhere (session version bumped): the phone subscribed before hears nothing;
  // a disabled account neither
  received.length = 0;
  await db.user.update({ where: { id: alice!.id }, data: { sessionVersion: { increment: 1 } } });
  await db.user.update({ where: { id: bob!.id }, data: { disabledAt: new Date() } });
  const silent = await sender.sendToUsers([alice!.id, bob!.id], payload, () => true);
  expect(silent).toEqual({ sent: 0, gone: 0, failed: 0 });
  expect(received).toEqual([]);
  expect(await hasPushSubscription(db, alice!.id, `${base}/ok/phone`)).toBe(false);
  expect(await countPushSubscriptions(db, alice!.id)).toBe(0);
  // subscribing again (the toggle turned on after signing in) makes it live once more
  await savePushSubscription(db, alice!.id, { endpoint: `${base}/ok/phone`, keys: phone.keys }, null);
  expect(await hasPushSubscription(db, alice!.id, `${base}/ok/phone`)).toBe(true);
  expect(await hasPushSubscription(db, bob!.id, `${base}/ok/phone`)).toBe(false);
  expect((await sender.sendToUsers([alice!.id], payload, () => true)).sent).toBe(1);
  await sender.close();
});
