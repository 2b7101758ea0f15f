import { describe, expect, it } from "vitest";
import { SessionPresence } from "./session-presence";

const ada = { userId: "u1", name: "Ada" };
const bob = { userId: "u2", name: "Bob" };

describe("SessionPresence", () => {
  it("counts people, not sockets", () => {
    const presence = new SessionPresence();
    expect(presence.join("s1", "sock-a1", ada)).toEqual({ sessionId: "s1", viewers: [ada], changed: true });
    expect(presence.join("s1", "sock-a2", ada)).toMatchObject({ viewers: [ada], changed: false });
    expect(presence.join("s1", "sock-b1", bob)).toMatchObject({ viewers: [ada, bob], changed: true });
    expect(presence.leave("s1", "sock-a1")).toMatchObject({ viewers: [ada, bob], changed: false });
    expect(presence.leave("s1", "sock-a2")).toMatchObject({ viewers: [bob], changed: true });
  });

  it("a resubscribe of the same socket changes nothing", () => {
    const presence = new SessionPresence();
    presence.join("s1", "sock", ada);
    expect(presence.join("s1", "sock", ada).changed).toBe(false);
  });

  it("a disconnect leaves every session the socket viewed", () => {
    const presence = new SessionPresence();
    presence.join("s1", "sock-a", ada);
    presence.join("s2", "sock-a", ada);
    presence.join("s2", "sock-b", bob);
    presence.join("s3", "sock-b", bob);
    expect(presence.leaveAll("sock-a")).toEqual([
      { sessionId: "s1", viewers: [], changed: true },
      { sessionId: "s2", viewers: [bob], changed: true },
    ]);
    expect(presence.viewers("s3")).toEqual([bob]);
  });
});
