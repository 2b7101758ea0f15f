import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createAdapterSeal, sealAdapterClient, type SealRefusal } from "./adapter-sealing";
import type { Redis } from "./redis-connection";

const key = randomBytes(32);

describe("adapter seal", () => {
  it("opens what it sealed for the same stream or channel, and nothing else", () => {
    const seal = createAdapterSeal({ key });
    const sealed = seal.seal("stream:s", Buffer.from("secret event text"));
    expect(sealed.toString("latin1")).not.toContain("secret");
    const opened = seal.open("stream:s", sealed);
    expect(opened.ok && opened.plain.toString()).toBe("secret event text");
    expect(seal.open("stream:other", sealed)).toEqual({ ok: false, reason: "does not open" });
    const flipped = Buffer.from(sealed);
    flipped[30] = (flipped[30] ?? 0) ^ 1;
    expect(seal.open("stream:s", flipped)).toEqual({ ok: false, reason: "does not open" });
    expect(createAdapterSeal({ key: randomBytes(32) }).open("stream:s", sealed)).toEqual({ ok: false, reason: "does not open" });
    expect(seal.open("stream:s", Buffer.from('{"uid":"x"}'))).toEqual({ ok: false, reason: "unsealed" });
  });

  it("refuses a message sealed too long ago (its time is authenticated)", () => {
    let now = 5_000_000;
    const seal = createAdapterSeal({ key, maxAgeMs: 60_000, now: () => now });
    const sealed = seal.seal("c", Buffer.from("x"));
    now += 60_001;
    expect(seal.open("c", sealed)).toEqual({ ok: false, reason: "stale" });
    // Moving the time forward in the header breaks the tag.
    const moved = Buffer.from(sealed);
    moved.writeBigUInt64BE(BigInt(now), 1);
    expect(seal.open("c", moved)).toEqual({ ok: false, reason: "does not open" });
  });
});

/** A stand-in for node-redis: a stream and channels in memory. */
function fakeRedis() {
  const stream: { id: string; message: Record<string, string> }[] = [];
  const listeners = new Map<string, ((m: Buffer, c: string) => void)[]>();
  const client = {
    xAdd: async (_key: string, _id: string, fields: Record<string, string>) => {
      const id = `${stream.length + 1}-0`;
      stream.push({ id, message: { ...fields } });
      return id;
    },
    xRead: async (streams: { key: string }[]) => [{ name: streams[0]!.key, messages: stream.map((e) => ({ id: e.id, message: { ...e.message } })) }],
    xRange: async () => stream.map((e) => ({ id: e.id, message: { ...e.message } })),
    publish: async (channel: string, payload: Buffer) => {
      for (const l of listeners.get(channel) ?? []) l(payload, channel);
      return 1;
    },
    sPublish: async () => 1,
    subscribe: async (channels: string[], listener: (m: Buffer, c: string) => void) => {
      for (const c of channels) listeners.set(c, [...(listeners.get(c) ?? []), listener]);
    },
    sSubscribe: async () => undefined,
    duplicate: () => client,
  };
  /** The unwrapped methods (a forger writing straight to Redis); each node wraps a copy of its own. */
  const raw = Object.freeze({ ...client });
  return { raw, stream };
}

describe("sealed adapter client", () => {
  const setup = () => {
    const refused: { reason: SealRefusal; where: string }[] = [];
    const seal = createAdapterSeal({ key });
    const writer = fakeRedis();
    const report = (reason: SealRefusal, where: string) => void refused.push({ reason, where });
    const nodeA: Redis = sealAdapterClient({ ...writer.raw, duplicate: () => ({ ...writer.raw }) } as unknown as Redis, seal, report);
    // node B reads the same stream through its own wrapped client
    const nodeB: Redis = sealAdapterClient({ ...writer.raw } as unknown as Redis, seal, report);
    return { refused, writer, nodeA, nodeB };
  };

  it("writes an entry's data sealed, and the reader gets it back whole", async () => {
    const { writer, nodeA, nodeB } = setup();
    const data = JSON.stringify({ packet: { data: ["session:event", { text: "TOKEN-1234" }] } });
    await nodeA.xAdd("conduit:socket.io", "*", { uid: "uid-a", nsp: "/", type: "3", data });
    expect(JSON.stringify(writer.stream)).not.toContain("TOKEN-1234");
    expect(writer.stream[0]!.message).toEqual({ uid: "uid-a", nsp: "/", type: "3", sealed: expect.any(String) });
    const read = (await nodeB.xRead([{ key: "conduit:socket.io", id: "$" }])) as { messages: { message: Record<string, string> }[] }[];
    expect(read[0]!.messages[0]!.message).toEqual({ uid: "uid-a", nsp: "/", type: "3", data });
  });

  it("hands this node's own entries back without their data, and xRange opens them all", async () => {
    const { nodeA } = setup();
    await nodeA.xAdd("k", "*", { uid: "uid-a", nsp: "/", type: "6" });
    const read = (await nodeA.xRead([{ key: "k", id: "$" }])) as { messages: { message: Record<string, string> }[] }[];
    expect(read[0]!.messages[0]!.message).toEqual({ uid: "uid-a", nsp: "/", type: "6" });
    const ranged = (await nodeA.xRange("k", "-", "+")) as { message: Record<string, string> }[];
    expect(ranged[0]!.message).toEqual({ uid: "uid-a", nsp: "/", type: "6" });
  });

  it("drops a forged or altered entry (no namespace: the adapter skips it) and reports it", async () => {
    const { writer, nodeA, nodeB, refused } = setup();
    await writer.raw.xAdd("k", "*", { uid: "forger", nsp: "/", type: "3", data: JSON.stringify({ packet: {} }) });
    await nodeA.xAdd("k", "*", { uid: "uid-a", nsp: "/", type: "3", data: "{}" });
    writer.stream[1]!.message.type = "9"; // a field bound to the seal, changed
    const read = (await nodeB.xRead([{ key: "k", id: "$" }])) as { messages: { id: string; message: Record<string, string> }[] }[];
    expect(read[0]!.messages.map((m) => m.message)).toEqual([{}, {}]);
    expect(refused).toEqual([
      { reason: "unsealed", where: "stream:k" },
      { reason: "does not open", where: "stream:k" },
    ]);
  });

  it("seals channel messages and opens them for the subscriber; a forged one is dropped", async () => {
    const { writer, nodeA, refused } = setup();
    const got: string[] = [];
    await nodeA.duplicate().subscribe(["ch#/#"], (m: Buffer) => void got.push(m.toString()), true);
    await nodeA.publish("ch#/#", Buffer.from("fetch-sockets answer with a cookie"));
    await writer.raw.publish("ch#/#", Buffer.from("forged"));
    expect(got).toEqual(["fetch-sockets answer with a cookie"]);
    expect(refused).toEqual([{ reason: "unsealed", where: "channel:ch#/#" }]);
  });
});
