/**
 * The instance's VAPID key pair (RFC 8292): made once into `DATA_DIR/vapid-keys.json` (0600),
 * read by the sidecar (it signs every push) and the web app (browsers subscribe with the
 * public key). Both processes may ask first: the file is created exclusively, and the loser of
 * that race reads the winner's keys, so there is only ever one pair.
 */
import { createECDH } from "node:crypto";
import path from "node:path";
import { z } from "zod";
import { readOrCreateKeyFile } from "@/server/secrets/key-file";

export const vapidKeysFile = "vapid-keys.json";

const ZVapidKeys = z.object({
  /** Uncompressed P-256 point, base64url (65 bytes): the browser's `applicationServerKey`. */
  publicKey: z.string().regex(/^[A-Za-z0-9_-]{87}$/),
  /** The private scalar, base64url (32 bytes). */
  privateKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});
export type VapidKeys = z.infer<typeof ZVapidKeys>;

/** A fresh P-256 key pair in the encoding web-push and browsers take. */
export function generateVapidKeys(): VapidKeys {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  // the private scalar may have leading zero bytes that getPrivateKey() drops: pad to 32
  const priv = Buffer.alloc(32);
  const raw = ecdh.getPrivateKey();
  raw.copy(priv, 32 - raw.length);
  return { publicKey: ecdh.getPublicKey().toString("base64url"), privateKey: priv.toString("base64url") };
}

const cache = new Map<string, VapidKeys>();

/** The keys in `dataDir`, made on first use. A damaged file is an error, never silently replaced (subscriptions depend on it). */
export function loadVapidKeys(dataDir: string): VapidKeys {
  const file = path.resolve(/*turbopackIgnore: true*/ dataDir, vapidKeysFile);
  const cached = cache.get(file);
  if (cached) return cached;
  const parsed = ZVapidKeys.safeParse(
    JSON.parse(readOrCreateKeyFile(file, () => `${JSON.stringify(generateVapidKeys())}\n`)),
  );
  if (!parsed.success)
    throw new Error(`${file} is not a VAPID key pair; move it away to make a new one (browsers then subscribe again).`);
  cache.set(file, parsed.data);
  return parsed.data;
}
