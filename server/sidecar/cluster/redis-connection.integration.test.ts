// The sidecar's Redis copies on a real Redis (CONDUIT_TEST_REDIS_URL): which ones arm node-redis'
// per-command timer, the publisher's queue cap, and what close drains.
import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectRedis, publisherQueueMax, type RedisConnection } from "./redis-connection";

const log = pino({ level: "silent" });
const redisUrl = process.env.CONDUIT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe("redis connection", () => {
  const opened: RedisConnection[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const redis of opened.splice(0)) await redis.close();
  });
  const connect = async () => {
    const redis = await connectRedis(redisUrl, log);
    opened.push(redis);
    return redis;
  };
  const key = () => `conduit-redis-test-${randomBytes(4).toString("hex")}`;

  it("arms a per-command timer on the command client only, not on the publisher, its duplicates or the blocking copies", async () => {
    const redis = await connect();
    const [publisher, blocking] = await Promise.all([redis.publisher(), redis.blocking()]);
    const reader = publisher.duplicate();
    await reader.connect();
    const timers = vi.spyOn(AbortSignal, "timeout");
    const stream = key();
    for (let i = 0; i < 5; i++) await publisher.xAdd(stream, "*", { n: String(i) });
    expect(await reader.xLen(stream)).toBe(5);
    expect(await blocking.blPop(key(), 0.05)).toBeNull();
    expect(timers).not.toHaveBeenCalled();
    // node-redis' default (5 s) stays on the command client
    await redis.client.get(key());
    expect(timers).toHaveBeenCalledTimes(1);
    expect(timers).toHaveBeenCalledWith(5_000);
    await reader.del(stream);
    reader.destroy();
  });

  it("refuses appends past the publisher's queue cap instead of holding them", async () => {
    const redis = await connect();
    const publisher = await redis.publisher();
    const stream = key();
    // queued in one tick: none is answered before the last is asked
    const appends = Array.from({ length: publisherQueueMax + 5 }, (_, i) =>
      publisher.xAdd(stream, "*", { n: String(i) }).then(
        () => "ok",
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      ),
    );
    const outcomes = await Promise.all(appends);
    expect(outcomes.filter((o) => o === "ok")).toHaveLength(publisherQueueMax);
    expect(new Set(outcomes.filter((o) => o !== "ok"))).toEqual(new Set(["The queue is full"]));
    await redis.client.del(stream);
  });

  it("close sends what the publisher still holds, and ends a blocking read", async () => {
    const redis = await connectRedis(redisUrl, log);
    const [publisher, blocking] = await Promise.all([redis.publisher(), redis.blocking()]);
    const stream = key();
    const waiting = blocking.blPop(key(), 30).catch((err: unknown) => err);
    const appends = Array.from({ length: 200 }, (_, i) => publisher.xAdd(stream, "*", { n: String(i) }));
    await redis.close();
    await Promise.all(appends);
    expect(await waiting).toBeInstanceOf(Error);
    const check = await connect();
    expect(await check.client.xLen(stream)).toBe(200);
    await check.client.del(stream);
  });
});
