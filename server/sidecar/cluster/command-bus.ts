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
 * Owns: keys, correlation, timeouts, the serving loops. Must not: know sessions or the hub
 * (`command-forwarder.ts` gives the methods their meaning).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { z } from "zod";
import { AppError, ErrorCode, toWireError } from "@/server/shared/errors/app-error";
import type { Redis, RedisConnection } from "./redis-connection";

/** A method served by this node: gets the payload (JSON), answers JSON or throws an AppError. */
export type BusHandler = (payload: unknown) => Promise<unknown>;

export interface CommandBus {
  readonly selfId: string;
  /** Serves `method` on this node (one handler per method). */
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
  /** Default wait for an answer. */
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
  from: z.string(),
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
  resolve: (data: unknown) => void;
  reject: (err: AppError) => void;
  timer: ReturnType<typeof setTimeout>;
}

export async function createCommandBus(options: CommandBusOptions): Promise<CommandBus> {
  const { redis, selfId, prefix, log } = options;
  const defaultTimeout = options.timeoutMs ?? defaultForwardTimeoutMs;
  const requestsOf = (nodeId: string) => `${prefix}:node:${nodeId}:requests`;
  const repliesOf = (nodeId: string) => `${prefix}:node:${nodeId}:replies`;
  const handlers = new Map<string, BusHandler>();
  const waiting = new Map<string, Waiter>();
  let closed = false;

  const push = async (key: string, message: unknown) => {
    await redis.client.multi().rPush(key, JSON.stringify(message)).pExpire(key, listTtlMs).exec();
  };

  const serve = async (message: z.infer<typeof ZRequest>) => {
    let reply: z.infer<typeof ZReply>;
    try {
      const handler = handlers.get(message.method);
      if (!handler) throw new AppError(ErrorCode.unavailable, `This server does not serve "${message.method}"; it may run an older release.`);
      const data = await handler(message.payload);
      reply = { id: message.id, ok: true, data: data === undefined ? null : data };
    } catch (err) {
      if (!(err instanceof AppError)) log.error({ err, method: message.method }, "forwarded command failed");
      reply = { id: message.id, ok: false, error: toWireError(err) };
    }
    if (message.oneWay) return;
    await push(repliesOf(message.from), reply).catch((err: unknown) =>
      log.warn({ err, method: message.method, to: message.from }, "answering a forwarded command failed"),
    );
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
    const parsed = ZRequest.safeParse(safeJson(text));
    if (!parsed.success) return log.warn("a malformed command reached the bus; dropped");
    if (parsed.data.deadline < Date.now()) {
      log.warn({ method: parsed.data.method, from: parsed.data.from }, "a forwarded command arrived after its deadline; dropped");
      return;
    }
    void serve(parsed.data);
  });
  void loop(replyClient, repliesOf(selfId), (text) => {
    const parsed = ZReply.safeParse(safeJson(text));
    if (!parsed.success) return log.warn("a malformed reply reached the bus; dropped");
    const waiter = waiting.get(parsed.data.id);
    if (!waiter) return; // timed out meanwhile
    waiting.delete(parsed.data.id);
    clearTimeout(waiter.timer);
    if (parsed.data.ok) waiter.resolve(parsed.data.data);
    else waiter.reject(new AppError(parsed.data.error.code, parsed.data.error.message));
  });

  return {
    selfId,
    handle(method, handler) {
      if (handlers.has(method)) throw new Error(`command bus: "${method}" is already served`);
      handlers.set(method, handler);
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
        waiting.set(id, { resolve, reject, timer });
        push(requestsOf(nodeId), { id, from: selfId, method, payload, deadline: Date.now() + timeoutMs }).catch((err: unknown) => {
          waiting.delete(id);
          clearTimeout(timer);
          log.warn({ err, method, to: nodeId }, "forwarding a command failed");
          reject(new AppError(ErrorCode.unavailable, "Could not reach the other servers (Redis); try again in a moment."));
        });
      });
    },
    async notify(nodeId, method, payload) {
      await push(requestsOf(nodeId), {
        id: randomUUID(),
        from: selfId,
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

