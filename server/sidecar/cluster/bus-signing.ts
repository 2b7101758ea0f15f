/**
 * Signed command-bus messages. Every message a sidecar pushes to another's list is
 * `cb1.<mac>.<json>`: the JSON names a unique id, the time it was signed, the sender, the
 * addressee and the kind (request or reply) around the body, and `<mac>` is its HMAC-SHA256
 * (base64url) under the cluster's bus key (`cluster-keys.ts`). A receiver takes a message only
 * when the MAC is right (compared with `timingSafeEqual`), it is addressed to this node and of
 * the kind this list carries, it was signed less than `maxAgeMs` ago (and not more than that
 * ahead: clocks of a cluster are kept in step by NTP), and its id was not seen before. Ids are
 * remembered until their message would be stale anyway, so a message copied back into a list is
 * refused as replayed, or later as stale.
 *
 * Whoever can write to Redis but does not hold `NEXTAUTH_SECRET` can therefore neither forge a
 * command nor change, redirect or repeat a real one. The body is not encrypted: Redis's password
 * keeps it from readers (docs/SECURITY.md, "Cluster").
 *
 * Owns: the format, the checks, the replay memory. Must not: know methods or sessions.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { z } from "zod";

export type BusKind = "request" | "reply";

/** Why a message was refused (logged with it). */
export type BusRefusal =
  | "unsigned"
  | "bad signature"
  | "malformed"
  | "addressed to another node"
  | "wrong kind"
  | "stale"
  | "from the future"
  | "replayed";

export type Verified = { ok: true; id: string; from: string; body: unknown } | { ok: false; reason: BusRefusal; from?: string };

export interface BusSigner {
  /** The message for `to`, signed now with a fresh id. */
  sign(to: string, kind: BusKind, body: unknown): string;
  /** The body and its sender when `text` passes every check, else why not. */
  verify(text: string, kind: BusKind): Verified;
}

export interface BusSignerOptions {
  /** The bus key (32 bytes, `deriveClusterKeys().busMac`). */
  key: Uint8Array;
  selfId: string;
  /** How old a message may be when read (default {@link defaultBusMaxAgeMs}). */
  maxAgeMs?: number;
  /** Ids remembered at most (the oldest are forgotten beyond it; default 200,000). */
  rememberMax?: number;
  now?: () => number;
}

/** A message signed longer ago than this is stale: twice the default forwarding wait. */
export const defaultBusMaxAgeMs = 30_000;

const prefix = "cb1.";
/** base64url of 32 bytes. */
const macLength = 43;

const ZEnvelope = z.object({
  id: z.string().min(16).max(64),
  t: z.number().int(),
  from: z.string().min(1).max(200),
  to: z.string().min(1).max(200),
  kind: z.enum(["request", "reply"]),
  body: z.unknown(),
});

export function createBusSigner(options: BusSignerOptions): BusSigner {
  const { key, selfId } = options;
  const maxAgeMs = options.maxAgeMs ?? defaultBusMaxAgeMs;
  const rememberMax = options.rememberMax ?? 200_000;
  const now = options.now ?? Date.now;
  /** Id → when its message turns stale (insertion order is roughly that order). */
  const seen = new Map<string, number>();
  const mac = (json: string) => createHmac("sha256", key).update(prefix).update(json).digest();

  const remember = (id: string, until: number, at: number) => {
    for (const [old, expires] of seen) {
      if (expires > at && seen.size < rememberMax) break;
      seen.delete(old);
    }
    seen.set(id, until);
  };

  return {
    sign(to, kind, body) {
      const json = JSON.stringify({ id: randomUUID(), t: now(), from: selfId, to, kind, body });
      return `${prefix}${mac(json).toString("base64url")}.${json}`;
    },
    verify(text, kind) {
      if (!text.startsWith(prefix) || text.charAt(prefix.length + macLength) !== ".") return { ok: false, reason: "unsigned" };
      const given = Buffer.from(text.slice(prefix.length, prefix.length + macLength), "base64url");
      const json = text.slice(prefix.length + macLength + 1);
      const expected = mac(json);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "bad signature" };
      let parsed: z.infer<typeof ZEnvelope>;
      try {
        const result = ZEnvelope.safeParse(JSON.parse(json));
        if (!result.success) return { ok: false, reason: "malformed" };
        parsed = result.data;
      } catch {
        return { ok: false, reason: "malformed" };
      }
      const { from } = parsed;
      if (parsed.to !== selfId) return { ok: false, reason: "addressed to another node", from };
      if (parsed.kind !== kind) return { ok: false, reason: "wrong kind", from };
      const at = now();
      if (parsed.t < at - maxAgeMs) return { ok: false, reason: "stale", from };
      if (parsed.t > at + maxAgeMs) return { ok: false, reason: "from the future", from };
      if (seen.has(parsed.id)) return { ok: false, reason: "replayed", from };
      remember(parsed.id, parsed.t + maxAgeMs, at);
      return { ok: true, id: parsed.id, from, body: parsed.body };
    },
  };
}
