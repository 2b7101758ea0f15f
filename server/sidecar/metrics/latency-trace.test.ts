import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { createLatencyTrace, LATENCY_TRACE_PREFIX, traceEmittedEvent, tracedDecider, tracedNotify } from "./latency-trace";

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
    traceEmittedEvent(trace, event(4, "cli", { type: "assistant", message: {} }));
    traceEmittedEvent(trace, event(5, "cli", { type: "control_request", request_id: "r", request: { subtype: "can_use_tool" } }));
    expect(lines.every((l) => l.startsWith(LATENCY_TRACE_PREFIX) && l.endsWith("\n"))).toBe(true);
    expect(parsed().map((l) => [l.stage, l.seq, l.line])).toEqual([
      ["prompt-emitted", 1, undefined],
      ["line-emitted", 3, "text_delta"],
      ["line-emitted", 4, "assistant"],
      ["line-emitted", 5, "can_use_tool"],
    ]);
    expect(parsed()[0]!.arrivedAt).toBe(1_700_000_000_000);
    expect(typeof parsed()[0]!.t).toBe("number");
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
