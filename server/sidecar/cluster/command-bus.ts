/**
 * Requests between sidecars over Redis: each node reads its own request list
 * (`<prefix>:node:<id>:requests`) and its reply list (`…:replies`) with blocking pops; a request
 * carries a correlation id, the asker's id, a method name, a JSON payload and a deadline. The
 * answer is the same `{ok,data}` / `{ok:false,error}` a socket ack carries. An owner that does
 * not answer in time gives the asker an `unavailable` AppError; a request found after its
 * deadline (the owner was busy or restarting) is dropped unanswered, never run late.
 *
 * Lists, not pub/sub: a request pushed while the owner reconnects waits in its list instead of
 * being lost. Each list expires a minute after its last push, so a node that is gone for good
 * leaves nothing behind.
 *
 * Every request and reply is signed (`bus-signing.ts`): an unsigned, badly signed, stale,
 * replayed or misaddressed message is dropped unanswered and logged with the reason, and a reply
 * counts only from the node that was asked. The sender a handler is told of is the signed one.
 *
 * Owns: keys, correlation, timeouts, the serving loops. Must not: know sessions or the hub
 * (`command-forwarder.ts` gives the methods their meaning).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { AppError, ErrorCode, toWireError } from "@/server/shared/errors/app-error";
import { createBusSigner, defaultBusMaxAgeMs, type BusKind } from "./bus-signing";
import type { ForwardedCheck } from "./forwarded-authorization";
import type { Redis, RedisConnection } from "./redis-connection";

/** Who sent a request (the node whose signature it carries). */
export interface BusContext {
  from: string;
}

/** A method served by this node: gets the payload (JSON), answers JSON or throws an AppError. */
export type BusHandler = (payload: unknown, context: BusContext) => Promise<unknown>;

export interface CommandBus {
  readonly selfId: string;
  /** Serves `method` on this node (one handler per method), each request after the owner's check of it. */
  handle(method: string, handler: BusHandler): void;
  /** Asks `nodeId` to run `method`; rejects with AppError(unavailable) when no answer comes within `timeoutMs`. */
  request(nodeId: string, method: string, payload: unknown, timeoutMs?: number): Promise<unknown>;
  /** Tells `nodeId` something; no answer is awaited (a dead node simply never reads it). */
  notify(nodeId: string, method: string, payload: unknown): Promise<void>;
  /** Stops serving; requests still waiting are answered `unavailable`. */
  close(): Promise<void>;
}

export interface CommandBusOptions {
  redis: RedisConnection;
  selfId: string;
  /** Key prefix shared by the cluster (tests use a unique one each). */
  prefix: string;
  log: Logger;
  /** The bus key (`deriveClusterKeys(secret).busMac`): every message is signed and checked with it. */
  key: Uint8Array;
  /**
   * The owner's check of each method (`createForwardedAuthorizer().checkFor`): run before its
   * handler with the signed sender; throws at `handle` for a method it has no rule for.
   */
  checkFor: (method: string) => ForwardedCheck;
  /** Default wait for an answer (at most the signature's {@link defaultBusMaxAgeMs}). */
  timeoutMs?: number;
}

/** The default wait for an owner's answer: a prompt's work (images stored, a child spawned) fits. */
export const defaultForwardTimeoutMs = 15_000;
/** Seconds a blocking pop waits before it looks at `closed` again. */
const popSeconds = 1;
/** A list nobody pushed to for this long is dropped by Redis. */
const listTtlMs = 60_000;

const ZRequest = z.object({
  id: z.string(),
  method: z.string(),
  payload: z.unknown(),
  deadline: z.number(),
  /** No answer wanted. */
  oneWay: z.boolean().optional(),
});
const ZWireError = z.object({ code: z.enum(Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]]), message: z.string() });
const ZReply = z.union([
  z.object({ id: z.string(), ok: z.literal(true), data: z.unknown() }),
  z.object({ id: z.string(), ok: z.literal(false), error: ZWireError }),
]);

interface Waiter {
  /** The node asked: only its reply counts. */
  nodeId: string;
  resolve: (data: unknown) => void;
  reject: (err: AppError) => void;
  timer: ReturnType<typeof setTimeout>;
}

export async function createCommandBus(options: CommandBusOptions): Promise<CommandBus> {
  const { redis, selfId, prefix, log } = options;
  const defaultTimeout = options.timeoutMs ?? defaultForwardTimeoutMs;
  if (defaultTimeout > defaultBusMaxAgeMs) throw new Error(`command bus: a wait over ${defaultBusMaxAgeMs} ms outlives its request's signature`);
  const signer = createBusSigner({ key: options.key, selfId });
  const requestsOf = (nodeId: string) => `${prefix}:node:${nodeId}:requests`;
  const repliesOf = (nodeId: string) => `${prefix}:node:${nodeId}:replies`;
  const handlers = new Map<string, { check: ForwardedCheck; handler: BusHandler }>();
  const waiting = new Map<string, Waiter>();
  let closed = false;

  const push = async (nodeId: string, kind: BusKind, message: unknown) => {
    const key = kind === "request" ? requestsOf(nodeId) : repliesOf(nodeId);
    await redis.client.multi().rPush(key, signer.sign(nodeId, kind, message)).pExpire(key, listTtlMs).exec();
  };
  /** The body of a message that passes every check of `bus-signing.ts`; a refusal is logged. */
  const opened = (text: string, kind: BusKind): { from: string; body: unknown } | undefined => {
    const verified = signer.verify(text, kind);
    if (verified.ok) return verified;
    log.warn({ reason: verified.reason, claimedFrom: verified.from, kind, node: selfId }, `a ${kind} on the command bus was refused: ${verified.reason}`);
    return undefined;
  };

  const serve = async (message: z.infer<typeof ZRequest>, from: string) => {
    let reply: z.infer<typeof ZReply>;
    try {
      const served = handlers.get(message.method);
      if (!served) throw new AppError(ErrorCode.unavailable, `This server does not serve "${message.method}"; it may run an older release.`);
      const data = await served.handler(await served.check(message.payload, from), { from });
      reply = { id: message.id, ok: true, data: data === undefined ? null : data };
    } catch (err) {
      if (!(err instanceof AppError)) log.error({ err, method: message.method }, "forwarded command failed");
      reply = { id: message.id, ok: false, error: toWireError(err) };
    }
    if (message.oneWay) return;
    await push(from, "reply", reply).catch((err: unknown) => log.warn({ err, method: message.method, to: from }, "answering a forwarded command failed"));
  };

  const loop = async (client: Redis, key: string, onMessage: (text: string) => void) => {
    while (!closed) {
      let popped: { key: string; element: string } | null;
      try {
        popped = await client.blPop(key, popSeconds);
      } catch (err) {
        if (closed) return;
        log.warn({ err, key }, "reading the command bus failed; retrying");
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (popped) onMessage(popped.element);
    }
  };

  const [requestClient, replyClient] = await Promise.all([redis.blocking(), redis.blocking()]);
  void loop(requestClient, requestsOf(selfId), (text) => {
    const message = opened(text, "request");
    if (!message) return;
    const parsed = ZRequest.safeParse(message.body);
    if (!parsed.success) return log.warn({ from: message.from }, "a malformed command reached the bus; dropped");
    if (parsed.data.deadline < Date.now()) {
      log.warn({ method: parsed.data.method, from: message.from }, "a forwarded command arrived after its deadline; dropped");
      return;
    }
    void serve(parsed.data, message.from);
  });
  void loop(replyClient, repliesOf(selfId), (text) => {
    const message = opened(text, "reply");
    if (!message) return;
    const parsed = ZReply.safeParse(message.body);
    if (!parsed.success) return log.warn({ from: message.from }, "a malformed reply reached the bus; dropped");
    const waiter = waiting.get(parsed.data.id);
    if (!waiter) return; // timed out meanwhile
    if (waiter.nodeId !== message.from) {
      log.warn({ from: message.from, asked: waiter.nodeId }, "a reply on the command bus was refused: not from the node asked");
      return;
    }
    waiting.delete(parsed.data.id);
    clearTimeout(waiter.timer);
    if (parsed.data.ok) waiter.resolve(parsed.data.data);
    else waiter.reject(new AppError(parsed.data.error.code, parsed.data.error.message));
  });

  return {
    selfId,
    handle(method, handler) {
      if (handlers.has(method)) throw new Error(`command bus: "${method}" is already served`);
      handlers.set(method, { check: options.checkFor(method), handler });
    },
    request(nodeId, method, payload, timeoutMs = defaultTimeout) {
      if (closed) return Promise.reject(new AppError(ErrorCode.unavailable, "This server is shutting down; try again in a moment."));
      const id = randomUUID();
      return new Promise<unknown>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(
            new AppError(
              ErrorCode.unavailable,
              `The server running this session (${nodeId}) did not answer within ${seconds(timeoutMs)} s. Try again in a moment.`,
            ),
          );
        }, timeoutMs);
        waiting.set(id, { nodeId, resolve, reject, timer });
        push(nodeId, "request", { id, method, payload, deadline: Date.now() + timeoutMs }).catch((err: unknown) => {
          waiting.delete(id);
          clearTimeout(timer);
          log.warn({ err, method, to: nodeId }, "forwarding a command failed");
          reject(new AppError(ErrorCode.unavailable, "Could not reach the other servers (Redis); try again in a moment."));
        });
      });
    },
    async notify(nodeId, method, payload) {
      await push(nodeId, "request", {
        id: randomUUID(),
        method,
        payload,
        deadline: Date.now() + defaultTimeout,
        oneWay: true,
      });
    },
    async close() {
      closed = true;
      for (const [id, waiter] of waiting) {
        clearTimeout(waiter.timer);
        waiter.reject(new AppError(ErrorCode.unavailable, "This server is shutting down; try again in a moment."));
        waiting.delete(id);
      }
      requestClient.destroy();
      replyClient.destroy();
    },
  };
}

/** "1.5" for 1500 ms, "15" for 15000 ms. */
function seconds(ms: number): string {
  return ms < 10_000 ? String(Math.round(ms / 100) / 10) : String(Math.round(ms / 1000));
}

