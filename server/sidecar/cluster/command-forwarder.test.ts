import { describe, expect, it } from "vitest";
import { AppError } from "@/server/shared/errors/app-error";
import type { ClusterDirectory } from "./cluster-directory";
import type { BusHandler, CommandBus } from "./command-bus";
import { createSessionRouter, localSessionRouter } from "./command-forwarder";
import { SessionOwnedElsewhere } from "./session-owned-elsewhere";

/** Nodes wired in memory: a request runs the target node's handler (JSON round trip, as over Redis). */
function network() {
  const handlers = new Map<string, Map<string, BusHandler>>();
  const sent: { to: string; method: string }[] = [];
  const busOf = (selfId: string): CommandBus => {
    const mine = new Map<string, BusHandler>();
    handlers.set(selfId, mine);
    return {
      selfId,
      handle: (method, handler) => void mine.set(method, handler),
      async request(nodeId, method, payload) {
        sent.push({ to: nodeId, method });
        const handler = handlers.get(nodeId)?.get(method);
        if (!handler) throw new AppError("unavailable", `${nodeId} did not answer`);
        return JSON.parse(JSON.stringify(await handler(JSON.parse(JSON.stringify(payload)), { from: selfId })));
      },
      notify: async () => undefined,
      close: async () => undefined,
    };
  };
  return { busOf, sent };
}

const directory = (selfId: string, owners: Record<string, string | null>): ClusterDirectory => ({
  selfId,
  ownerOf: async (id) => owners[id] ?? null,
  liveNodes: async () => [],
  pickNodeForNewSession: async () => selfId,
});

describe("session router", () => {
  it("runs here when this node or nobody owns the session, at the owner otherwise", async () => {
    const net = network();
    const owners = { s1: "a", s2: null, s3: "b" };
    const ran: string[] = [];
    const routerA = createSessionRouter({ directory: directory("a", owners), bus: net.busOf("a") });
    const routerB = createSessionRouter({ directory: directory("b", owners), bus: net.busOf("b") });
    const opA = routerA.route("echo", async (args: { id: string }) => (ran.push(`a:${args.id}`), `a ran ${args.id}`));
    const opB = routerB.route("echo", async (args: { id: string }) => (ran.push(`b:${args.id}`), `b ran ${args.id}`));
    expect(await opB("s1", { id: "s1" })).toBe("a ran s1");
    expect(await opB("s2", { id: "s2" })).toBe("b ran s2");
    expect(await opB("s3", { id: "s3" })).toBe("b ran s3");
    expect(await opA("s3", { id: "s3" })).toBe("b ran s3");
    expect(ran).toEqual(["a:s1", "b:s2", "b:s3", "b:s3"]);
  });

  it("sends a command that lost a claim race once to the winner", async () => {
    const net = network();
    const owners: Record<string, string | null> = { s: null };
    let claims = 0;
    const routerA = createSessionRouter({ directory: directory("a", owners), bus: net.busOf("a") });
    const routerB = createSessionRouter({ directory: directory("b", owners), bus: net.busOf("b") });
    routerA.route("prompt", async () => "a ran it");
    const opB = routerB.route("prompt", async () => {
      claims += 1;
      throw new SessionOwnedElsewhere("s", "a");
    });
    expect(await opB("s", {})).toBe("a ran it");
    expect(claims).toBe(1);
    expect(net.sent).toEqual([{ to: "a", method: "session.prompt" }]);
  });

  it("answers unavailable, never chasing further, when the owner lost the session meanwhile", async () => {
    const net = network();
    const routerA = createSessionRouter({ directory: directory("a", { s: "a" }), bus: net.busOf("a") });
    const routerB = createSessionRouter({ directory: directory("b", { s: "a" }), bus: net.busOf("b") });
    routerA.route("prompt", async () => {
      throw new SessionOwnedElsewhere("s", "c");
    });
    const opB = routerB.route("prompt", async () => "b must not run it");
    await expect(opB("s", {})).rejects.toMatchObject({ code: "unavailable", message: "This session moved to another server a moment ago; try again." });
    expect(net.sent).toEqual([{ to: "a", method: "session.prompt" }]);
  });

  it("routes a command again once the silent owner's lease runs out, without waiting out the bus", async () => {
    const net = network();
    const bus = net.busOf("b");
    // the owner died: its requests are never answered (the real bus would give up after 15 s)
    const silent: CommandBus = { ...bus, request: (nodeId, method, payload) => (nodeId === "a" ? new Promise(() => undefined) : bus.request(nodeId, method, payload)) };
    const expiresAt = Date.now() + 150;
    const leaseReads: number[] = [];
    const routerB = createSessionRouter({
      directory: {
        ...directory("b", {}),
        ownerOf: async () => (Date.now() < expiresAt ? "a" : null),
        async leaseOf() {
          leaseReads.push(Date.now());
          return { ownerId: "a", expiresAt };
        },
      },
      bus: silent,
    });
    const ran: string[] = [];
    const op = routerB.route("prompt", async () => (ran.push("b"), "b ran it"));
    expect(await op("s", {})).toBe("b ran it");
    expect(ran).toEqual(["b"]);
    // one read to route, none while the lease held, one when it ran out, one to route again
    expect(leaseReads).toHaveLength(3);
    expect(leaseReads[1]!).toBeGreaterThanOrEqual(expiresAt);
  });

  it("keeps waiting for an owner whose lease is renewed meanwhile", async () => {
    const net = network();
    let expiresAt = Date.now() + 100;
    let answer!: (value: unknown) => void;
    const bus = net.busOf("b");
    const slow: CommandBus = { ...bus, request: () => new Promise((resolve) => (answer = resolve)) };
    const routerB = createSessionRouter({
      directory: {
        ...directory("b", {}),
        async leaseOf() {
          // the owner renews: each read finds the lease 100 ms further on
          const lease = { ownerId: "a", expiresAt };
          expiresAt = Date.now() + 100;
          return lease;
        },
      },
      bus: slow,
    });
    const ran: string[] = [];
    const result = routerB.route("prompt", async () => (ran.push("b"), "b ran it"))("s", {});
    await new Promise((r) => setTimeout(r, 400));
    answer("a ran it");
    expect(await result).toBe("a ran it");
    expect(ran).toEqual([]);
  });

  it("runs a command of a session whose lease this node holds without reading the lease row", async () => {
    const net = network();
    const reads: string[] = [];
    const routerA = createSessionRouter({
      directory: {
        ...directory("a", {}),
        async leaseOf(id) {
          reads.push(id);
          return { ownerId: "b", expiresAt: Date.now() + 10_000 };
        },
      },
      bus: net.busOf("a"),
      holds: (id) => id === "mine",
    });
    const ran: string[] = [];
    const op = routerA.route("prompt", async (args: { id: string }) => (ran.push(args.id), "a ran it"));
    expect(await op("mine", { id: "mine" })).toBe("a ran it");
    expect(reads).toEqual([]);
    // a session it does not hold is looked up (and here forwarded to b, which does not answer)
    await expect(op("theirs", { id: "theirs" })).rejects.toThrow();
    expect(reads).toEqual(["theirs"]);
    expect(ran).toEqual(["mine"]);
  });

  it("times each forwarded command", async () => {
    const net = network();
    const seen: string[] = [];
    const routerA = createSessionRouter({ directory: directory("a", { s: "a" }), bus: net.busOf("a") });
    const routerB = createSessionRouter({
      directory: directory("b", { s: "a" }),
      bus: net.busOf("b"),
      observeForward: (seconds, method) => seen.push(`${method}:${seconds >= 0}`),
    });
    routerA.route("stop", async () => "ok");
    await routerB.route("stop", async () => "local")("s", {});
    expect(seen).toEqual(["session.stop:true"]);
  });

  it("without Redis runs every operation here", async () => {
    expect(await localSessionRouter.route("x", async (n: number) => n + 1)("any", 1)).toBe(2);
  });
});
