import { describe, expect, it } from "vitest";
import { approxSessionMb, pickNode, type SidecarNodeView } from "./cluster-directory";

const node = (id: string, freeMb: number, more: Partial<SidecarNodeView> = {}): SidecarNodeView => ({
  id,
  host: `host-${id}`,
  url: null,
  heartbeatAt: "2026-12-01T00:00:00.000Z",
  freeMb,
  liveSessions: 0,
  ...more,
});

describe("pickNode", () => {
  it("picks the host with the most free memory", () => {
    expect(pickNode([node("a", 100), node("b", 900), node("c", 300)], "a")).toBe("b");
  });
  it("keeps a new session here on a tie", () => {
    expect(pickNode([node("a", 500), node("b", 500)], "b")).toBe("b");
  });
  it("answers this node when no node is listed yet", () => {
    expect(pickNode([], "self")).toBe("self");
  });
  it("counts the sessions placed since a node's last beat against its host's memory", () => {
    const nodes = [node("a", 1_000), node("b", 900)];
    expect(pickNode(nodes, "a", new Map([["a", 1]]))).toBe("b");
    expect(pickNode(nodes, "b", new Map([["b", 1]]))).toBe("a");
  });
  it("spreads a burst of creations between two beats instead of sending it all to the leader", () => {
    const nodes = [node("a", 8_000), node("b", 8_000 - approxSessionMb / 2), node("c", 7_000)];
    const pending = new Map<string, number>();
    const picks: string[] = [];
    for (let i = 0; i < 12; i++) {
      const picked = pickNode(nodes, "c", pending);
      pending.set(picked, (pending.get(picked) ?? 0) + 1);
      picks.push(picked);
    }
    const count = (id: string) => picks.filter((p) => p === id).length;
    // a and b take turns; c, 1,000 MB behind, gets its first once they have taken that much
    expect(picks.slice(0, 10)).toEqual(["a", "b", "a", "b", "a", "b", "a", "b", "a", "b"]);
    expect([count("a"), count("b"), count("c")]).toEqual([6, 5, 1]);
    expect(picks[10]).toBe("c");
  });
  it("balances the nodes of one host by their sessions (they share its memory)", () => {
    const shared = { host: "one" };
    const nodes = [
      node("a", 6_000, { ...shared, liveSessions: 30, heartbeatAt: "2026-12-01T00:00:01.000Z" }),
      node("b", 6_400, { ...shared, liveSessions: 10, heartbeatAt: "2026-12-01T00:00:00.000Z" }),
      node("c", 6_100, { ...shared, liveSessions: 12, heartbeatAt: "2026-12-01T00:00:00.500Z" }),
    ];
    expect(pickNode(nodes, "a")).toBe("b");
    expect(pickNode(nodes, "a", new Map([["b", 3]]))).toBe("c");
  });
  it("takes a host's memory from its latest beat, and its sessions' pending placements together", () => {
    const nodes = [
      node("a", 9_000, { host: "one", heartbeatAt: "2026-12-01T00:00:00.000Z" }),
      node("b", 5_000, { host: "one", heartbeatAt: "2026-12-01T00:00:01.000Z" }),
      node("c", 5_500, { host: "two" }),
    ];
    // host one has 5,000 MB by its latest beat: host two leads
    expect(pickNode(nodes, "a")).toBe("c");
    const nodes2 = [nodes[0]!, nodes[1]!, node("c", 4_700, { host: "two" })];
    expect(pickNode(nodes2, "c")).toBe("a");
    // two placements on b count for host one as a whole
    expect(pickNode(nodes2, "a", new Map([["b", 2]]))).toBe("c");
  });
});
