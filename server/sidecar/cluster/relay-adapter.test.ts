import { describe, expect, it, vi } from "vitest";
import { relayLocalFirst } from "./relay-adapter";

function fakeAdapter(recovery: boolean) {
  const calls: string[] = [];
  const adapter = {
    uid: "self",
    nsp: { name: "/", server: { opts: recovery ? { connectionStateRecovery: {} } : {} } },
    rooms: new Map<string, Set<string>>(),
    sids: new Map<string, Set<string>>(),
    broadcast: vi.fn(async (_packet: unknown, _opts: unknown) => void calls.push("cluster-broadcast")),
    publishAndReturnOffset: vi.fn(() => {
      calls.push("publish");
      return new Promise<string>(() => undefined);
    }),
    onRawMessage: vi.fn(),
    // what the in-memory adapter's broadcast calls: encode once, then each socket of the rooms
    _encode: () => ["encoded"],
    apply: () => void calls.push("local-write"),
  };
  return { adapter, calls };
}

describe("relayLocalFirst", () => {
  it("publishes and writes to the local sockets without waiting for Redis", () => {
    const { adapter, calls } = fakeAdapter(false);
    relayLocalFirst(adapter, () => undefined);
    void adapter.broadcast({ type: 2, data: ["fact", { n: 1 }] }, { rooms: new Set(["r"]), except: new Set() });
    // the publish never resolves here, yet the local write ran, after the publish was queued
    expect(calls).toEqual(["publish", "local-write"]);
    expect(adapter.publishAndReturnOffset).toHaveBeenCalledWith({
      type: 3,
      data: { packet: { type: 2, data: ["fact", { n: 1 }], nsp: "/" }, opts: { rooms: ["r"], except: [], flags: undefined } },
    });
  });

  it("keeps the adapter's own path with connection-state recovery, and for local emits", () => {
    for (const [recovery, flags] of [
      [true, {}],
      [false, { local: true }],
    ] as const) {
      const { adapter, calls } = fakeAdapter(recovery);
      relayLocalFirst(adapter, () => undefined);
      void adapter.broadcast({ type: 2, data: ["fact"] }, { rooms: new Set(["r"]), except: new Set(), flags });
      expect(calls).toEqual(["cluster-broadcast"]);
    }
  });

  it("reports a failed publish", async () => {
    const { adapter } = fakeAdapter(false);
    adapter.publishAndReturnOffset.mockImplementation(() => Promise.reject(new Error("redis down")));
    const failures: unknown[] = [];
    relayLocalFirst(adapter, (err) => failures.push(err));
    void adapter.broadcast({ type: 2, data: ["fact"] }, { rooms: new Set(["r"]), except: new Set() });
    await new Promise((r) => setImmediate(r));
    expect(failures).toHaveLength(1);
  });

  it("drops its own stream entries before decoding them, and passes the others' on", () => {
    const { adapter } = fakeAdapter(false);
    const decode = adapter.onRawMessage;
    relayLocalFirst(adapter, () => undefined);
    adapter.onRawMessage({ uid: "self" }, "1-0");
    adapter.onRawMessage({ uid: "other" }, "1-1");
    expect(decode).toHaveBeenCalledTimes(1);
    expect(decode).toHaveBeenCalledWith({ uid: "other" }, "1-1");
  });
});
