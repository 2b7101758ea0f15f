import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { createLatencyTrace, LATENCY_TRACE_PREFIX, traceEmittedEvent, tracedDecider, tracedEventStore, tracedNotify, traceReceivedPrompts } from "./latency-trace";

function collect(enabled: boolean) {
  const lines: string[] = [];
  const trace = createLatencyTrace(enabled, (line) => lines.push(line));
  const parsed = () => lines.map((l) => JSON.parse(l.slice(LATENCY_TRACE_PREFIX.length)) as Record<string, unknown>);
  return { trace, lines, parsed };
}

const event = (seq: number, kind: WireEvent["kind"], payload: unknown): WireEvent => ({
  sessionId: "s1",
  seq,
  kind,
  payload,
  trimmed: false,
  at: new Date(1_700_000_000_000).toISOString(),
});

describe("latency trace", () => {
  it("writes nothing and wraps nothing when off", () => {
    const { trace, lines } = collect(false);
    const decide = async () => "allow";
    const notify = () => undefined;
    trace.mark("approval-asked", { sessionId: "s1" });
    traceEmittedEvent(trace, event(1, "prompt", { text: "hi" }));
    expect(lines).toEqual([]);
    expect(tracedDecider(trace, decide)).toBe(decide);
    expect(tracedNotify(trace, notify)).toBe(notify);
  });

  it("marks the prompt, the first text delta, the assistant line and a permission question, one JSON line each", () => {
    const { trace, lines, parsed } = collect(true);
    traceEmittedEvent(trace, event(1, "prompt", { text: "hi" }));
    traceEmittedEvent(trace, event(2, "cli", { type: "system", subtype: "init" }));
    traceEmittedEvent(trace, event(3, "cli", { type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "He" } } }));
    traceEmittedEvent(trace, event(4, "cli", { type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "llo" } } }));
    traceEmittedEvent(trace, event(5, "cli", { type: "assistant", message: {} }));
    traceEmittedEvent(trace, event(6, "cli", { type: "control_request", request_id: "r", request: { subtype: "can_use_tool" } }));
    // the next prompt's turn has a first delta of its own
    traceEmittedEvent(trace, event(7, "prompt", { text: "again" }));
    traceEmittedEvent(trace, event(8, "cli", { type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "Hi" } } }));
    traceEmittedEvent(trace, event(9, "cli", { type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text: "!" } } }));
    expect(lines.every((l) => l.startsWith(LATENCY_TRACE_PREFIX) && l.endsWith("\n"))).toBe(true);
    expect(parsed().map((l) => [l.stage, l.seq, l.line])).toEqual([
      ["prompt-emitted", 1, undefined],
      ["line-emitted", 3, "text_delta"],
      ["line-emitted", 5, "assistant"],
      ["line-emitted", 6, "can_use_tool"],
      ["prompt-emitted", 7, undefined],
      ["line-emitted", 8, "text_delta"],
    ]);
    expect(parsed()[0]!.arrivedAt).toBe(1_700_000_000_000);
    expect(typeof parsed()[0]!.t).toBe("number");
  });

  it("marks the inserts holding a turn's first text delta or a permission question, with those rows' seqs", async () => {
    const { trace, parsed } = collect(true);
    let seq = 0;
    let clash = false;
    const store = tracedEventStore(trace, {
      insert: async (rows: readonly { sessionId: string; kind: string; payload: string }[]) => {
        if (clash) {
          clash = false;
          throw new Error("seq clash");
        }
        return rows.map(() => ({ seq: ++seq }));
      },
    });
    const row = (kind: string, payload: unknown) => ({ sessionId: "s1", kind, payload: JSON.stringify(payload) });
    const delta = (text: string) => row("cli", { type: "stream_event", event: { type: "content_block_delta", delta: { type: "text_delta", text } } });
    await store.insert([row("prompt", { text: "hi" })]);
    // a batch the store refused is written again by the writer: its first delta is marked then
    clash = true;
    await expect(store.insert([delta("He"), delta("llo")])).rejects.toThrow("seq clash");
    await store.insert([delta("He"), delta("llo")]);
    await store.insert([delta(" there")]);
    await store.insert([row("cli", { type: "control_request", request_id: "r", request: { subtype: "can_use_tool" } })]);
    await store.insert([row("prompt", { text: "again" }), delta("Hi")]);
    expect(parsed().map((l) => [l.stage, l.rows, l.seqs])).toEqual([
      ["events-inserted", 2, "2"],
      ["events-inserted", 1, "5"],
      ["events-inserted", 2, "7"],
    ]);
  });

  it("marks a prompt command as it reaches a socket, and lets every packet through", () => {
    const { trace, parsed } = collect(true);
    let onConnection: ((socket: { use(fn: (packet: unknown[], next: () => void) => void): unknown }) => void) | undefined;
    traceReceivedPrompts(trace, { on: (_event, listener) => void (onConnection = listener) });
    const middleware: ((packet: unknown[], next: () => void) => void)[] = [];
    onConnection!({ use: (fn) => middleware.push(fn) });
    let passed = 0;
    for (const packet of [["session:prompt", { sessionId: "s1", text: "hi" }], ["session:subscribe", { sessionId: "s1" }], ["session:prompt", "junk"]])
      middleware[0]!(packet, () => void passed++);
    expect(passed).toBe(3);
    expect(parsed().map((l) => [l.stage, l.sessionId])).toEqual([["prompt-received", "s1"]]);
  });

  it("marks a question reaching the decider and an approval going to its deciders", async () => {
    const { trace, parsed } = collect(true);
    const told: string[] = [];
    const decide = tracedDecider(trace, async (_s: { sessionId: string }, q: { requestId: string }) => q.requestId);
    const notify = tracedNotify(trace, (_users, name) => void told.push(name));
    expect(await decide({ sessionId: "s1" }, { requestId: "r1" })).toBe("r1");
    notify(["u1"], "approval:count", { pending: 1 });
    notify(["u1"], "approval:requested", { id: "a1", sessionId: "s1" });
    expect(told).toEqual(["approval:count", "approval:requested"]);
    expect(parsed().map((l) => [l.stage, l.requestId ?? l.approvalId])).toEqual([
      ["approval-asked", "r1"],
      ["approval-told", "a1"],
    ]);
  });
});
