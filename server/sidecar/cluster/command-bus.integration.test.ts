// The command bus on a real Redis (CONDUIT_TEST_REDIS_URL), each test under its own key prefix.
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { until } from "@/test/until";
import { createBusSigner } from "./bus-signing";
import { createCommandBus, type CommandBus } from "./command-bus";
import { connectRedis, type RedisConnection } from "./redis-connection";

const log = pino({ level: "silent" });
const redisUrl = process.env.CONDUIT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const key = randomBytes(32);
/** Every method served, unchecked (the owner's role checks have their own tests). */
const serveAll = () => async (args: unknown) => args;

/** A logger whose warnings the test reads. */
function recordingLog() {
  const lines: { msg: string; reason?: string; claimedFrom?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
      done();
    },
  });
  return { log: pino({ level: "warn" }, stream), lines };
}

describe("command bus", () => {
  const opened: { bus: CommandBus; redis: RedisConnection }[] = [];
  afterEach(async () => {
    for (const { bus, redis } of opened.splice(0)) {
      await bus.close();
      await redis.close();
    }
  });

  async function node(selfId: string, prefix: string, timeoutMs?: number, nodeLog = log, nodeKey: Uint8Array = key): Promise<CommandBus> {
    const redis = await connectRedis(redisUrl, nodeLog);
    const bus = await createCommandBus({ redis, selfId, prefix, log: nodeLog, key: nodeKey, checkFor: serveAll, ...(timeoutMs ? { timeoutMs } : {}) });
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

  it("refuses unsigned, tampered, replayed, stale and foreign-key messages pushed straight to Redis, logging each, and runs none", async () => {
    const p = prefix();
    const recorded = recordingLog();
    const a = await node("a", p, undefined, recorded.log);
    const ran: unknown[] = [];
    a.handle("session.setMode", async (payload) => (ran.push(payload), { mode: (payload as { mode: string }).mode }));
    const raw = await connectRedis(redisUrl, log);
    opened.push({ bus: { close: async () => undefined } as unknown as CommandBus, redis: raw });
    const list = `${p}:node:a:requests`;
    const request = (mode: string) => ({ id: randomBytes(8).toString("hex"), method: "session.setMode", payload: { mode }, deadline: Date.now() + 10_000 });

    // One genuine request, as node B signs it: run once.
    const b = createBusSigner({ key, selfId: "b" });
    const genuine = b.sign("a", "request", request("plan"));
    await raw.client.rPush(list, genuine);
    await until(() => ran.length === 1, 10_000, "the genuine request ran");
    // The same message pushed again: replayed.
    await raw.client.rPush(list, genuine);
    // The bus's old plain JSON: a forged setMode to bypassPermissions.
    await raw.client.rPush(list, JSON.stringify({ ...request("bypassPermissions"), from: "b" }));
    // The genuine message with its mode changed.
    await raw.client.rPush(list, genuine.replace('"plan"', '"bypassPermissions"'));
    // Signed with a key that is not the cluster's.
    await raw.client.rPush(list, createBusSigner({ key: randomBytes(32), selfId: "b" }).sign("a", "request", request("bypassPermissions")));
    // Signed 31 s ago.
    const past = createBusSigner({ key, selfId: "b", now: () => Date.now() - 31_000 });
    await raw.client.rPush(list, past.sign("a", "request", request("bypassPermissions")));
    // Signed for another node, pushed to A's list.
    await raw.client.rPush(list, b.sign("c", "request", request("bypassPermissions")));

    const refusals = () => recorded.lines.filter((l) => l.msg.startsWith("a request on the command bus was refused"));
    await until(() => refusals().length === 6, 10_000, "six refusals");
    expect(refusals().map((l) => l.reason)).toEqual(["replayed", "unsigned", "bad signature", "bad signature", "stale", "addressed to another node"]);
    expect(ran).toEqual([{ mode: "plan" }]);
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
