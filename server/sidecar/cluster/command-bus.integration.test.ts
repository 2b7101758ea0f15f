// The command bus on a real Redis (CONDUIT_TEST_REDIS_URL), each test under its own key prefix.
import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { createCommandBus, type CommandBus } from "./command-bus";
import { connectRedis, type RedisConnection } from "./redis-connection";

const log = pino({ level: "silent" });
const redisUrl = process.env.CONDUIT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

describe("command bus", () => {
  const opened: { bus: CommandBus; redis: RedisConnection }[] = [];
  afterEach(async () => {
    for (const { bus, redis } of opened.splice(0)) {
      await bus.close();
      await redis.close();
    }
  });

  async function node(selfId: string, prefix: string, timeoutMs?: number): Promise<CommandBus> {
    const redis = await connectRedis(redisUrl, log);
    const bus = await createCommandBus({ redis, selfId, prefix, log, ...(timeoutMs ? { timeoutMs } : {}) });
    opened.push({ bus, redis });
    return bus;
  }
  const prefix = () => `conduit-bus-test-${randomBytes(4).toString("hex")}`;

  it("answers a request with the owner's data, and with its AppError's code and message", async () => {
    const p = prefix();
    const [a, b] = await Promise.all([node("a", p), node("b", p)]);
    a.handle("echo", async (payload) => ({ got: payload, at: "a" }));
    a.handle("refuse", async () => {
      throw new AppError(ErrorCode.forbidden, "Only owners may do that.");
    });
    a.handle("crash", async () => {
      throw new Error("secret internals");
    });
    expect(await b.request("a", "echo", { text: "hi", n: [1, 2] })).toEqual({ got: { text: "hi", n: [1, 2] }, at: "a" });
    await expect(b.request("a", "refuse", {})).rejects.toMatchObject({ code: "forbidden", message: "Only owners may do that." });
    // An unexpected error never leaks its text across the bus either.
    await expect(b.request("a", "crash", {})).rejects.toMatchObject({ code: "internal", message: "Something went wrong on the server." });
    await expect(b.request("a", "nobody-serves-this", {})).rejects.toMatchObject({ code: "unavailable" });
  });

  it("gives unavailable when the owner does not answer, and the owner drops the request once its deadline passed", async () => {
    const p = prefix();
    const b = await node("b", p);
    await expect(b.request("a", "echo", {}, 300)).rejects.toMatchObject({
      code: ErrorCode.unavailable,
      message: "The server running this session (a) did not answer within 0.3 s. Try again in a moment.",
    });
    // A node that starts later finds the stale request and does not run it.
    const ran: unknown[] = [];
    const a = await node("a", p);
    a.handle("echo", async (payload) => {
      ran.push(payload);
      return payload;
    });
    expect(await b.request("a", "echo", { fresh: true })).toEqual({ fresh: true });
    expect(ran).toEqual([{ fresh: true }]);
  });

  it("keeps two clusters apart by prefix", async () => {
    const [a1, b2] = await Promise.all([node("a", prefix()), node("b", prefix())]);
    a1.handle("echo", async () => "cluster 1");
    await expect(b2.request("a", "echo", {}, 300)).rejects.toMatchObject({ code: ErrorCode.unavailable });
  });
});

describe("redis connection", () => {
  it("refuses to start with a clear error when Redis cannot be reached", async () => {
    await expect(connectRedis("redis://:hunter2@127.0.0.1:1", log)).rejects.toThrow(
      /^Cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\): .*unset REDIS_URL to run a single sidecar\.$/,
    );
  });
});
