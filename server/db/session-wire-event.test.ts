import { describe, expect, it } from "vitest";
import type { SessionEventRecord } from "@/server/db/session-events";
import { toWireEvent, trimPayload } from "./session-wire-event";

const record = (payload: string, extra: Partial<SessionEventRecord> = {}): SessionEventRecord => ({
  sessionId: "s1",
  seq: 7,
  kind: "cli",
  payload,
  commandId: null,
  userId: null,
  createdAt: new Date("2026-01-02T03:04:05.000Z"),
  ...extra,
});

const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe("toWireEvent", () => {
  it("passes small payloads through, parsed", () => {
    expect(toWireEvent(record('{"type":"assistant","n":1}'))).toEqual({
      sessionId: "s1",
      seq: 7,
      kind: "cli",
      payload: { type: "assistant", n: 1 },
      trimmed: false,
      at: "2026-01-02T03:04:05.000Z",
    });
  });

  it("attributes commands to their user", () => {
    const event = toWireEvent(record('{"text":"hi"}', { kind: "prompt", userId: "u1" }), { userName: "Ada" });
    expect(event.user).toEqual({ id: "u1", name: "Ada" });
  });

  it("trims a payload over the limit, keeping its shape, unless asked for the whole", () => {
    const value = {
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "é".repeat(100_000) }] },
    };
    const text = JSON.stringify(value);
    const event = toWireEvent(record(text), { maxBytes: 4096 });
    expect(event.trimmed).toBe(true);
    expect(size(event.payload)).toBeLessThanOrEqual(4096);
    expect(event.payload).toMatchObject({
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: "t1" }] },
    });
    expect(toWireEvent(record(text), { maxBytes: 4096, whole: true })).toMatchObject({
      trimmed: false,
      payload: value,
    });
  });

  it("shows a payload that is not JSON as text", () => {
    expect(toWireEvent(record("not json")).payload).toBe("not json");
  });
});

describe("trimPayload", () => {
  it("cuts long strings with a note of what is missing", () => {
    const trimmed = trimPayload({ text: "a".repeat(10_000) }, 1024) as { text: string };
    expect(trimmed.text).toMatch(/^a+… \[\d+ more characters\]$/);
    expect(size(trimmed)).toBeLessThanOrEqual(1024);
  });

  it("shortens long arrays of small items", () => {
    const trimmed = trimPayload({ type: "x", items: Array.from({ length: 50_000 }, (_, i) => i) }, 2048) as {
      items: number[];
    };
    expect(size(trimmed)).toBeLessThanOrEqual(2048);
    expect(trimmed.items.slice(0, 3)).toEqual([0, 1, 2]);
  });

  it("falls back to type and subtype when nothing else fits", () => {
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key${i}`, i]));
    expect(trimPayload({ type: "system", subtype: "init", ...wide }, 256)).toEqual({ type: "system", subtype: "init" });
  });
});
