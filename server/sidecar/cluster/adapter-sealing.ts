/**
 * The Socket.IO adapter's traffic, encrypted. `@socket.io/redis-streams-adapter` carries every
 * room emit of the cluster (every session's live events, `user:<id>` notifications) in one Redis
 * stream, and its `fetchSockets` questions and answers (each socket's handshake, its headers and
 * cookie among them) on pub/sub channels. Filtering the stream per room cannot work (every node
 * reads all of it, and which sockets are in a room is known only at the reading node), so what it
 * carries is sealed instead: AES-256-GCM under the cluster's adapter key (`cluster-keys.ts`).
 *
 * The adapter has no hook for its encoding, so its Redis client is wrapped (`sealAdapterClient`):
 * `xAdd` seals an entry's data, leaving its sender's uid, namespace and type readable (the
 * adapter's readers route by them) but bound to the sealed part; `xRead`/`xRange` open it; `publish`/`sPublish` seal a channel message and the
 * listeners of `subscribe`/`sSubscribe` open it; `duplicate()` (the adapter's readers and
 * subscriber) gives a wrapped copy. A sealed message binds the stream or channel it was written
 * to and the time it was sealed; one that does not open, names another stream or channel, or is
 * older than {@link defaultSealMaxAgeMs}, is dropped and reported. Without the key, a reader of
 * Redis sees ciphertext, and a writer can inject nothing the nodes accept.
 *
 * Owns: the format and the wrapping. Must not: know rooms, events or the adapter's messages.
 */
import { createCipheriv, createDecipheriv, randomFillSync } from "node:crypto";
import type { Redis } from "./redis-connection";

/** A sealed message older than this is refused (a node's reader runs seconds behind at most). */
export const defaultSealMaxAgeMs = 60_000;

/** Why a sealed message was refused. */
export type SealRefusal = "unsealed" | "does not open" | "stale" | "from the future";

export interface AdapterSeal {
  /** `plain` sealed for `context` (the stream or channel it is written to). */
  seal(context: string, plain: Uint8Array): Buffer;
  open(context: string, sealed: Uint8Array): { ok: true; plain: Buffer } | { ok: false; reason: SealRefusal };
}

const version = 1;
/** version (1) + sealed-at ms (8) */
const headerLength = 9;
const ivLength = 12;
const tagLength = 16;

export function createAdapterSeal(options: { key: Uint8Array; maxAgeMs?: number; now?: () => number }): AdapterSeal {
  const { key } = options;
  if (key.length !== 32) throw new Error("adapter seal: the key must be 32 bytes");
  const maxAgeMs = options.maxAgeMs ?? defaultSealMaxAgeMs;
  const now = options.now ?? Date.now;
  const aad = (header: Uint8Array, context: string) => Buffer.concat([header, Buffer.from(context, "utf8")]);
  // Random IVs drawn from a pool filled 1,024 at a time (one call to the CSPRNG instead of one per message).
  const ivPool = Buffer.alloc(ivLength * 1024);
  let ivAt = ivPool.length;
  const nextIv = () => {
    if (ivAt === ivPool.length) {
      randomFillSync(ivPool);
      ivAt = 0;
    }
    ivAt += ivLength;
    return Buffer.from(ivPool.subarray(ivAt - ivLength, ivAt));
  };
  return {
    seal(context, plain) {
      const header = Buffer.alloc(headerLength);
      header.writeUInt8(version, 0);
      header.writeBigUInt64BE(BigInt(now()), 1);
      const iv = nextIv();
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(aad(header, context));
      const body = Buffer.concat([cipher.update(plain), cipher.final()]);
      return Buffer.concat([header, iv, body, cipher.getAuthTag()]);
    },
    open(context, sealed) {
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      if (bytes.length < headerLength + ivLength + tagLength || bytes.readUInt8(0) !== version) return { ok: false, reason: "unsealed" };
      const header = bytes.subarray(0, headerLength);
      const iv = bytes.subarray(headerLength, headerLength + ivLength);
      const body = bytes.subarray(headerLength + ivLength, bytes.length - tagLength);
      let plain: Buffer;
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv);
        decipher.setAAD(aad(header, context));
        decipher.setAuthTag(bytes.subarray(bytes.length - tagLength));
        plain = Buffer.concat([decipher.update(body), decipher.final()]);
      } catch {
        return { ok: false, reason: "does not open" };
      }
      // Authenticated above: the time is the sealer's.
      const sealedAt = Number(header.readBigUInt64BE(1));
      const at = now();
      if (sealedAt < at - maxAgeMs) return { ok: false, reason: "stale" };
      if (sealedAt > at + maxAgeMs) return { ok: false, reason: "from the future" };
      return { ok: true, plain };
    },
  };
}

/** What a refused message is reported with: why, and the stream or channel it came from. */
export type OnSealRefused = (reason: SealRefusal, where: string) => void;

type Fields = Record<string, string>;
type StreamReply = { name?: unknown; messages: { id: string; message: Fields }[] }[] | null;
type StreamEntry = { id: string; message: Fields };
type Listener = (message: Buffer, channel: Buffer | string) => unknown;

/** The field of a stream entry that holds its sealed data (`uid`, `nsp` and `type` stay readable, and bound to it). */
const sealedField = "sealed";

/**
 * Wraps `client` (the adapter's own copy: its methods are replaced on the instance) so every
 * message the adapter writes through it is sealed and every one it reads is opened. A stream
 * entry this node's adapters wrote is handed back unopened and without its data: the adapter
 * drops its own entries by `uid` before it reads their data (`relay-adapter.ts`).
 */
export function sealAdapterClient(client: Redis, seal: AdapterSeal, onRefused: OnSealRefused, own: Set<string> = new Set()): Redis {
  const c = client as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = (name: string) => {
    const fn = c[name];
    if (typeof fn !== "function") throw new Error(`adapter seal: the Redis client has no ${name}()`);
    return fn.bind(client);
  };
  const xAdd = original("xAdd");
  const xRead = original("xRead");
  const xRange = original("xRange");
  const publish = original("publish");
  const sPublish = original("sPublish");
  const subscribe = original("subscribe");
  const sSubscribe = original("sSubscribe");
  const duplicate = original("duplicate");

  const entryContext = (key: unknown, f: Fields) => `stream:${String(key)}\n${f.uid ?? ""}\n${f.nsp ?? ""}\n${f.type ?? ""}`;
  const channelContext = (channel: unknown) => `channel:${String(channel)}`;
  const openEntry = (key: unknown, entry: StreamEntry, skipOwn: boolean): StreamEntry => {
    const { uid, nsp, type } = entry.message;
    const head: Fields = { ...(uid !== undefined ? { uid } : {}), ...(nsp !== undefined ? { nsp } : {}), ...(type !== undefined ? { type } : {}) };
    if (skipOwn && uid !== undefined && own.has(uid)) return { id: entry.id, message: head };
    const sealed = entry.message[sealedField];
    const opened = sealed === undefined ? ({ ok: false, reason: "unsealed" } as const) : seal.open(entryContext(key, entry.message), Buffer.from(sealed, "base64"));
    if (opened.ok) {
      // "-": an entry without data; "d<data>": with it
      const text = opened.plain.toString("utf8");
      return { id: entry.id, message: text.startsWith("d") ? { ...head, data: text.slice(1) } : head };
    }
    onRefused(opened.reason, `stream:${String(key)}`);
    // No namespace: the adapter's reader skips it and moves past its offset.
    return { id: entry.id, message: {} };
  };
  const openListener =
    (listener: Listener): Listener =>
    (message, channel) => {
      const opened = seal.open(channelContext(channel), message);
      if (!opened.ok) return onRefused(opened.reason, channelContext(channel));
      return listener(opened.plain, channel);
    };
  const sealPayload = (channel: unknown, payload: unknown) =>
    seal.seal(channelContext(channel), typeof payload === "string" ? Buffer.from(payload, "utf8") : (payload as Uint8Array));

  c.xAdd = (key, id, fields, ...rest) => {
    const f = fields as Fields;
    if (f.uid !== undefined) own.add(f.uid);
    const plain = f.data === undefined ? "-" : `d${f.data}`;
    const entry: Fields = { ...f, [sealedField]: seal.seal(entryContext(key, f), Buffer.from(plain, "utf8")).toString("base64") };
    delete entry.data;
    return xAdd(key, id, entry, ...rest);
  };
  c.xRead = async (streams, ...rest) => {
    const reply = (await xRead(streams, ...rest)) as StreamReply;
    if (!reply) return reply;
    const asked = (Array.isArray(streams) ? streams : [streams]) as { key: string }[];
    return reply.map((stream, i) => {
      const key = typeof stream.name === "string" ? stream.name : asked[i]?.key;
      return { ...stream, messages: stream.messages.map((entry) => openEntry(key, entry, true)) };
    });
  };
  c.xRange = async (key, ...rest) => ((await xRange(key, ...rest)) as StreamEntry[]).map((entry) => openEntry(key, entry, false));
  c.publish = (channel, payload) => publish(channel, sealPayload(channel, payload));
  c.sPublish = (channel, payload) => sPublish(channel, sealPayload(channel, payload));
  c.subscribe = (channels, listener, ...rest) => subscribe(channels, openListener(listener as Listener), ...rest);
  c.sSubscribe = (channels, listener, ...rest) => sSubscribe(channels, openListener(listener as Listener), ...rest);
  c.duplicate = (...args) => sealAdapterClient(duplicate(...args) as Redis, seal, onRefused, own);
  return client;
}
