// The relay adapter on a real Redis (CONDUIT_TEST_REDIS_URL): two Socket.IO servers share one
// stream; node A reaches Redis through a gate (a TCP proxy this test can hold shut), so an XADD
// of A's can be kept from Redis at will.
import { randomBytes } from "node:crypto";
import { createServer, Socket as NetSocket, type Server as NetServer } from "node:net";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "redis";
import { Server } from "socket.io";
import { io as connect, type Socket as ClientSocket } from "socket.io-client";
import { afterEach, describe, expect, it } from "vitest";
import { createAdapterSeal, sealAdapterClient, type AdapterSeal } from "./adapter-sealing";
import type { Redis } from "./redis-connection";
import { createRelayAdapter } from "./relay-adapter";

const redisUrl = process.env.CONDUIT_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A TCP proxy to Redis whose client→Redis direction can be held: bytes wait until it opens. */
async function startGate(target: URL): Promise<{ url: string; hold(): void; open(): void; close(): Promise<void> }> {
  let held = false;
  const waiting: (() => void)[] = [];
  const sockets = new Set<NetSocket>();
  const server: NetServer = createServer((client) => {
    const upstream = new NetSocket();
    upstream.connect(Number(target.port || 6379), target.hostname);
    sockets.add(client).add(upstream);
    client.on("data", (chunk) => {
      if (held) waiting.push(() => upstream.write(chunk));
      else upstream.write(chunk);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const credentials = target.password === "" ? "" : `${target.username}:${target.password}@`;
  return {
    url: `redis://${credentials}127.0.0.1:${port}${target.pathname}`,
    hold: () => void (held = true),
    open: () => {
      held = false;
      for (const write of waiting.splice(0)) write();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("relay adapter", () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function node(url: string, prefix: string, seal?: { seal: AdapterSeal; refused: string[] }): Promise<{ io: Server; port: number }> {
    const client = createClient({ url });
    client.on("error", () => undefined);
    await client.connect();
    const http: HttpServer = createHttpServer();
    const io = new Server(http);
    const publisher = seal ? sealAdapterClient(client as unknown as Redis, seal.seal, (reason, where) => void seal.refused.push(`${reason} ${where}`)) : client;
    io.adapter(createRelayAdapter(publisher, { streamName: `${prefix}:stream`, channelPrefix: `${prefix}:ch`, blockTimeInMs: 200 }, () => undefined));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    cleanups.push(async () => {
      await new Promise<void>((r) => io.close(() => r()));
      await client.close().catch(() => client.destroy());
    });
    return { io, port: (http.address() as AddressInfo).port };
  }

  async function member(port: number, room: string, server: Server): Promise<ClientSocket> {
    const joined = new Promise<void>((resolve) =>
      server.once("connection", (s) => {
        void s.join(room);
        resolve();
      }),
    );
    const socket = connect(`http://127.0.0.1:${port}`, { transports: ["websocket"] });
    cleanups.push(() => void socket.close());
    await joined;
    return socket;
  }

  /**
   * Emits `warm` from `from` until every socket has had one. A node's stream reader starts at
   * the stream's end ("$") and keeps re-reading from "$" after each empty block until it has
   * seen an entry, so a single early emit can fall between two reads under load (CI once saw
   * it: B never got the first fact). Afterwards each reader holds a real offset.
   */
  async function warmUp(from: Server, room: string, sockets: ClientSocket[]): Promise<void> {
    const warmed = sockets.map((socket) => new Promise<void>((resolve) => socket.once("warm", () => resolve())));
    let done = false;
    void Promise.all(warmed).then(() => (done = true));
    const deadline = Date.now() + 10_000;
    while (!done && Date.now() < deadline) {
      from.to(room).emit("warm");
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(done, "every node's reader got a warm-up emit within 10 s").toBe(true);
  }

  /** Resolves with the first `fact` payload, or "none" when none came within `ms`. */
  const next = (socket: ClientSocket, ms: number) =>
    new Promise<unknown>((resolve) => {
      const timer = setTimeout(() => resolve("none"), ms);
      socket.once("fact", (payload: unknown) => {
        clearTimeout(timer);
        resolve(payload);
      });
    });

  it("writes a room emit to this node's sockets while Redis has not taken it yet, and the other node gets it once Redis has", async () => {
    const prefix = `relay-test-${randomBytes(4).toString("hex")}`;
    const gate = await startGate(new URL(redisUrl));
    cleanups.push(() => gate.close());
    const a = await node(gate.url, prefix);
    const b = await node(redisUrl, prefix);
    const onA = await member(a.port, "room-1", a.io);
    const onB = await member(b.port, "room-1", b.io);
    // both nodes read the stream: an emit before the hold reaches both
    await warmUp(a.io, "room-1", [onA, onB]);
    const warm = [next(onA, 10_000), next(onB, 10_000)];
    a.io.to("room-1").emit("fact", { n: 0 });
    expect(await Promise.all(warm)).toEqual([{ n: 0 }, { n: 0 }]);

    gate.hold();
    const atA = next(onA, 10_000);
    const atB = next(onB, 1_500);
    a.io.to("room-1").emit("fact", { n: 1 });
    // A's own socket has it although the XADD waits in the gate (the adapter used to await it first)
    expect(await atA).toEqual({ n: 1 });
    // ...and B cannot have it: nothing reached Redis
    expect(await atB).toBe("none");
    const later = next(onB, 10_000);
    gate.open();
    expect(await later).toEqual({ n: 1 });
  });

  it("delivers each emit once and in order, at this node and at the other", async () => {
    const prefix = `relay-test-${randomBytes(4).toString("hex")}`;
    const a = await node(redisUrl, prefix);
    const b = await node(redisUrl, prefix);
    const onA = await member(a.port, "room-2", a.io);
    const onB = await member(b.port, "room-2", b.io);
    // both nodes read the stream (a reader starts at the stream's end when it first reads)
    await warmUp(a.io, "room-2", [onA, onB]);
    const warm = [next(onA, 10_000), next(onB, 10_000)];
    a.io.to("room-2").emit("fact", { n: 0 });
    expect(await Promise.all(warm)).toEqual([{ n: 0 }, { n: 0 }]);
    const seenA: number[] = [];
    const seenB: number[] = [];
    onA.on("fact", (p: { n: number }) => seenA.push(p.n));
    onB.on("fact", (p: { n: number }) => seenB.push(p.n));
    for (let n = 1; n <= 200; n++) a.io.to("room-2").emit("fact", { n });
    const deadline = Date.now() + 15_000;
    while ((seenA.length < 200 || seenB.length < 200) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const expected = Array.from({ length: 200 }, (_, i) => i + 1);
    // each once, in order: A's own entries, read back from the stream, did not reach its socket again
    expect(seenA).toEqual(expected);
    expect(seenB).toEqual(expected);
  });

  it("sealed: the stream and the channels hold no event text, members on the other node get it, fetchSockets works, a forged entry reaches nobody", async () => {
    const prefix = `relay-test-${randomBytes(4).toString("hex")}`;
    const seal = { seal: createAdapterSeal({ key: randomBytes(32) }), refused: [] as string[] };
    const a = await node(redisUrl, prefix, seal);
    const b = await node(redisUrl, prefix, seal);
    const onA = await member(a.port, "room-3", a.io);
    const onB = await member(b.port, "room-3", b.io);
    await warmUp(a.io, "room-3", [onA, onB]);
    const token = `LIVE-EVENT-TOKEN-${randomBytes(6).toString("hex")}`;
    const atB = next(onB, 10_000);
    a.io.to("room-3").emit("fact", { text: `the CLI said ${token}` });
    expect(await atB).toEqual({ text: `the CLI said ${token}` });
    // fetchSockets crosses the channels (each socket's handshake, its headers among them)
    expect((await a.io.in("room-3").fetchSockets()).length).toBe(2);

    const reader = createClient({ url: redisUrl });
    reader.on("error", () => undefined);
    await reader.connect();
    cleanups.push(() => reader.close().catch(() => reader.destroy()));
    const entries = (await reader.xRange(`${prefix}:stream`, "-", "+")) ?? [];
    expect(entries.length).toBeGreaterThan(0);
    const stored = JSON.stringify(entries);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain("the CLI said");
    expect(stored).not.toContain("room-3");
    expect(entries.every((e) => e.message.data === undefined && typeof e.message.sealed === "string")).toBe(true);

    // An entry written straight to the stream, in the adapter's own format: nobody gets it.
    const forged = next(onB, 1_500);
    const uid = entries[0]!.message.uid!;
    await reader.xAdd(`${prefix}:stream`, "*", {
      uid: `${uid}-forged`,
      nsp: "/",
      type: "3",
      data: JSON.stringify({ packet: { type: 2, data: ["fact", { text: "forged" }], nsp: "/" }, opts: { rooms: ["room-3"], except: [], flags: {} } }),
    });
    expect(await forged).toBe("none");
    expect(seal.refused).toContain(`unsealed stream:${prefix}:stream`);
  });
});
