/**
 * Secrets at rest (MCP server env and header values): sealed with AES-256-GCM under the
 * instance's secret key, `DATA_DIR/secret-key` (32 random bytes, base64, 0600). The key is made
 * once, as the VAPID keys are (`server/push/vapid-keys.ts`): written whole to a temp file and
 * linked into place, so the web app (which seals) and the sidecar (which opens at spawn) never
 * make two. A damaged key file is an error, never silently replaced: everything sealed under it
 * would be lost.
 *
 * A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url); the additional data names what the
 * value belongs to (a row id), so a sealed blob copied into another row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import path from "node:path";
import { readOrCreateKeyFile } from "./key-file";

export const secretKeyFile = "secret-key";

const cache = new Map<string, Buffer>();

/** The instance key in `dataDir`, made on first use. */
export function loadSecretKey(dataDir: string): Buffer {
  const file = path.resolve(/*turbopackIgnore: true*/ dataDir, secretKeyFile);
  const cached = cache.get(file);
  if (cached) return cached;
  const key = Buffer.from(readOrCreateKeyFile(file, () => `${randomBytes(32).toString("base64")}\n`).trim(), "base64");
  if (key.length !== 32) {
    throw new Error(
      `${file} is not a 32-byte key; restore it from a backup (secrets sealed under it cannot be opened without it).`,
    );
  }
  cache.set(file, key);
  return key;
}

/** Seals `plaintext` for `context` (e.g. a row id). */
export function seal(key: Buffer, plaintext: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return ["v1", iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(
    ".",
  );
}

/** Opens a value made by {@link seal} for the same `context`; throws when it was altered, moved or sealed under another key. */
export function open(key: Buffer, sealed: string, context: string): string {
  const parts = sealed.split(".");
  if (parts.length !== 4 || parts[0] !== "v1") throw new Error("Not a sealed value");
  const [, iv, tag, body] = parts as [string, string, string, string];
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"));
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
}
