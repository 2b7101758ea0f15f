import { describe, expect, it } from "vitest";
import { pickNode, type SidecarNodeView } from "./cluster-directory";

const node = (id: string, freeMb: number): SidecarNodeView => ({
  id,
  host: "h",
  url: null,
  heartbeatAt: "2026-12-01T00:00:00.000Z",
  freeMb,
  liveSessions: 0,
});

describe("pickNode", () => {
  it("picks the node with the most free memory", () => {
    expect(pickNode([node("a", 100), node("b", 900), node("c", 300)], "a")).toBe("b");
  });
  it("keeps a new session here on a tie", () => {
    expect(pickNode([node("a", 500), node("b", 500)], "b")).toBe("b");
  });
  it("answers this node when no node is listed yet", () => {
    expect(pickNode([], "self")).toBe("self");
  });
});
