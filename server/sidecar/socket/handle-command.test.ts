import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { Server, type Socket as ServerSocket } from "socket.io";
import { io as connect, type Socket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { handleCommand, limitCommandsInFlight } from "./handle-command";

const log = pino({ level: "silent" });

interface Rig {
  client: Socket;
  /** Resolves the oldest command still waiting in the handler. */
  finishOne: () => void;
  started: () => number;
  close: () => Promise<void>;
}

const rigs: Rig[] = [];
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close();
});

/** A real Socket.IO server whose `slow` command waits until the test lets it finish. */
async function startRig(max: number): Promise<Rig> {
  const http = createServer();
  const io = new Server(http);
  const waiting: (() => void)[] = [];
  let started = 0;
  io.on("connection", (socket: ServerSocket) => {
    limitCommandsInFlight(socket, log, max);
    limitCommandsInFlight(socket, log, max); // idempotent: a second call adds no second counter
    socket.on(
      "slow",
      handleCommand(
        z.object({ n: z.number() }),
        async ({ n }) => {
          started += 1;
          await new Promise<void>((resolve) => waiting.push(resolve));
          return { n };
        },
        log,
      ),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const client = connect(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, {
    transports: ["websocket"],
    reconnection: false,
    forceNew: true,
  });
  await new Promise<void>((resolve) => client.once("connect", () => resolve()));
  const rig: Rig = {
    client,
    finishOne: () => waiting.shift()?.(),
    started: () => started,
    close: async () => {
      client.close();
      await new Promise<void>((resolve) => io.close(() => resolve()));
    },
  };
  rigs.push(rig);
  return rig;
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe("limitCommandsInFlight", () => {
  it("answers commands past the limit rate_limited at once, and frees a slot on each ack", async () => {
    const { client, finishOne, started } = await startRig(3);
    const first = [1, 2, 3].map((n) => client.emitWithAck("slow", { n }));
    await until(() => started() === 3);
    expect(await client.emitWithAck("slow", { n: 4 })).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    expect(started()).toBe(3);

    finishOne();
    expect(await first[0]).toEqual({ ok: true, data: { n: 1 } });
    const fifth = client.emitWithAck("slow", { n: 5 });
    await until(() => started() === 4);
    for (let i = 0; i < 3; i++) finishOne();
    expect(await Promise.all([first[1], first[2], fifth])).toEqual([
      { ok: true, data: { n: 2 } },
      { ok: true, data: { n: 3 } },
      { ok: true, data: { n: 5 } },
    ]);
  });

  it("frees the slot of a refused payload, and counts commands sent without an ack", async () => {
    const { client, finishOne, started } = await startRig(2);
    for (let i = 0; i < 5; i++) {
      expect(await client.emitWithAck("slow", { n: "bad" })).toMatchObject({
        ok: false,
        error: { code: "invalid_payload" },
      });
    }
    client.emit("slow", { n: 1 });
    client.emit("slow", { n: 2 });
    await until(() => started() === 2);
    client.emit("slow", { n: 3 });
    expect(await client.emitWithAck("slow", { n: 4 })).toMatchObject({ ok: false, error: { code: "rate_limited" } });
    expect(started()).toBe(2);
    finishOne();
    finishOne();
    await new Promise((r) => setTimeout(r, 20));
    const later = client.emitWithAck("slow", { n: 6 });
    await until(() => started() === 3);
    finishOne();
    expect(await later).toEqual({ ok: true, data: { n: 6 } });
  });

  it("takes no slot for events nobody handles", async () => {
    const { client, finishOne, started } = await startRig(1);
    for (let i = 0; i < 5; i++) client.emit("nobody:listens", {}, () => undefined);
    const one = client.emitWithAck("slow", { n: 1 });
    await until(() => started() === 1);
    finishOne();
    expect(await one).toEqual({ ok: true, data: { n: 1 } });
  });
});
