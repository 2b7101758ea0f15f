import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { EventOutbox, maxEventsPerMessage } from "./event-outbox";

function event(sessionId: string, seq: number): WireEvent {
  return { sessionId, seq, kind: "cli", payload: { n: seq }, at: "2026-12-04T00:00:00.000Z" } as unknown as WireEvent;
}

function recorder() {
  const sent: { sessionId: string; seqs: number[] }[] = [];
  const outbox = new EventOutbox(
    (sessionId, events) => sent.push({ sessionId, seqs: events.map((e) => e.seq) }),
    (err) => {
      throw err;
    },
  );
  return { sent, outbox };
}

describe("EventOutbox", () => {
  it("sends a session's events of one pass as one message, in order, once the pass ends", async () => {
    const { sent, outbox } = recorder();
    for (let seq = 1; seq <= 5; seq++) outbox.push(event("a", seq));
    outbox.push(event("b", 9));
    outbox.push(event("a", 6));
    expect(sent).toEqual([]); // nothing leaves inside the pass
    await Promise.resolve();
    expect(sent).toEqual([
      { sessionId: "a", seqs: [1, 2, 3, 4, 5, 6] },
      { sessionId: "b", seqs: [9] },
    ]);
    // the next pass starts a new message
    outbox.push(event("a", 7));
    await Promise.resolve();
    expect(sent.at(-1)).toEqual({ sessionId: "a", seqs: [7] });
    expect(sent).toHaveLength(3);
  });

  it("splits a long burst into messages of at most the cap, in order", async () => {
    const { sent, outbox } = recorder();
    const total = maxEventsPerMessage * 2 + 5;
    for (let seq = 1; seq <= total; seq++) outbox.push(event("a", seq));
    await Promise.resolve();
    expect(sent.map((m) => m.seqs.length)).toEqual([maxEventsPerMessage, maxEventsPerMessage, 5]);
    expect(sent.flatMap((m) => m.seqs)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it("sends a session's held events at once when asked (before its status), leaving the others for the pass's end", async () => {
    const { sent, outbox } = recorder();
    outbox.push(event("a", 1));
    outbox.push(event("b", 1));
    outbox.push(event("a", 2));
    outbox.flush("a");
    expect(sent).toEqual([{ sessionId: "a", seqs: [1, 2] }]);
    outbox.flush("a"); // nothing held: nothing sent
    outbox.push(event("a", 3));
    await Promise.resolve();
    expect(sent).toEqual([
      { sessionId: "a", seqs: [1, 2] },
      { sessionId: "b", seqs: [1] },
      { sessionId: "a", seqs: [3] },
    ]);
  });
});

describe("EventOutbox when a send throws", () => {
  it("reports it and still sends the other sessions' messages", async () => {
    const sent: string[] = [];
    const errors: string[] = [];
    const outbox = new EventOutbox(
      (sessionId) => {
        if (sessionId === "bad") throw new Error("boom");
        sent.push(sessionId);
      },
      (err, sessionId) => errors.push(`${sessionId}: ${(err as Error).message}`),
    );
    outbox.push(event("bad", 1));
    outbox.push(event("good", 1));
    await Promise.resolve();
    expect(errors).toEqual(["bad: boom"]);
    expect(sent).toEqual(["good"]);
  });
});
