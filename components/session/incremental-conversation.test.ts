import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { WireEvent } from "@/server/shared/wire/session";
import { buildConversation, type Conversation } from "./conversation";
import { IncrementalConversation, extendsLog } from "./incremental-conversation";
import { fixtureLog } from "./test-support";
import { seededRandom as random } from "@/test/seeded-random";


/**
 * A random but plausible log: prompts, streamed text, assistant text and tool calls (some by a
 * subagent), approvals asked, cancelled and decided, tool results, tasks, results, notices.
 * Ids are drawn from small pools so that answers meet their questions, and sometimes do not.
 */
function randomLog(seed: number, length: number): WireEvent[] {
  const r = random(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const toolIds = ["t1", "t2", "t3", "t4"];
  const requestIds = ["r1", "r2", "r3"];
  const events: WireEvent[] = [];
  const cli = (payload: unknown): Omit<WireEvent, "seq" | "sessionId" | "at" | "trimmed"> => ({ kind: "cli", payload });
  const makers: (() => Omit<WireEvent, "seq" | "sessionId" | "at" | "trimmed">)[] = [
    () => ({ kind: "prompt", payload: { text: `prompt ${events.length}` }, user: { id: "u1", name: pick(["Ada", "Bea"]) } }),
    () => cli({ type: "system", subtype: "init", model: pick(["m1", "m2"]), permissionMode: pick(["default", "plan"]) }),
    () => cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "message_start", message: { id: pick(["m1", "m2"]) } } }),
    () => cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "content_block_start", index: pick([0, 1]), content_block: { type: "text", text: "" } } }),
    () => cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "content_block_delta", index: pick([0, 1]), delta: { type: "text_delta", text: pick(["a", "b ", "c\n"]) } } }),
    () => cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "x" } } }),
    () => cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "message_stop", abandoned_blocks: r() < 0.3 } }),
    () =>
      cli({
        type: "assistant",
        parent_tool_use_id: r() < 0.2 ? pick(toolIds) : null,
        message: { id: pick(["m1", "m2"]), content: [{ type: "text", text: pick(["Hello.", "", "Done."]) }] },
      }),
    () =>
      cli({
        type: "assistant",
        parent_tool_use_id: r() < 0.2 ? pick(toolIds) : null,
        message: {
          id: pick(["m1", "m2"]),
          content: [
            { type: "thinking", thinking: pick(["hmm", ""]) },
            { type: "tool_use", id: pick(toolIds), name: pick(["Bash", "Write", "TodoWrite", "Agent"]), input: { command: "ls", todos: [{ content: "x", status: "pending" }] } },
          ],
        },
      }),
    () => cli({ type: "control_request", request_id: pick(requestIds), request: { subtype: "can_use_tool", tool_name: "Write", tool_use_id: r() < 0.8 ? pick(toolIds) : undefined, input: { file_path: "a.txt" } } }),
    () => cli({ type: "control_cancel_request", request_id: pick(requestIds) }),
    () => ({ kind: "decision", payload: { requestId: pick(requestIds), behavior: pick(["allow", "deny"]) }, user: { id: "u2", name: "Bea" } }),
    () => cli({ type: "user", message: { content: [{ type: "tool_result", tool_use_id: pick([...toolIds, "t9"]), content: "ok", is_error: r() < 0.3 }] } }),
    () => cli({ type: "system", subtype: pick(["task_started", "task_updated", "task_notification"]), task_id: pick(["k1", "k2"]), tool_use_id: r() < 0.5 ? pick(toolIds) : undefined, status: pick(["running", "completed"]), is_backgrounded: r() < 0.3 }),
    () => cli({ type: "system", subtype: "background_tasks_changed", tasks: [{ id: events.length }] }),
    () => cli({ type: "system", subtype: "session_title_changed", title: `title ${events.length}` }),
    () => cli({ type: "result", subtype: "success", usage: { input_tokens: 3, output_tokens: 5 }, total_cost_usd: events.length / 1000, terminal_reason: pick(["completed", "aborted_streaming"]) }),
    () => ({ kind: "interrupt", payload: {}, user: { id: "u1", name: "Ada" } }),
    () => ({ kind: "stderr", payload: { text: "oops" } }),
    () => ({ kind: "process", payload: { phase: pick(["created", "exited", "spawned"]), expected: r() < 0.5, resumed: true, code: 1 } }),
    () => ({ kind: "set-mode", payload: { mode: "plan" }, user: { id: "u1", name: "Ada" } }),
    () => cli({ type: "keep_alive" }),
  ];
  for (let i = 0; i < length; i++) {
    const made = pick(makers)();
    const seq = events.length + 1;
    events.push({ sessionId: "s1", seq, at: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(), trimmed: false, ...made } as WireEvent);
  }
  return events;
}

/** Plain data, so a later change to an object a view holds would show. */
const frozen = (c: Conversation) => JSON.parse(JSON.stringify(c)) as unknown;

/** Folds `events` one append at a time (sometimes several), checking each view against a full rebuild. */
function foldStepByStep(events: readonly WireEvent[], r: () => number = () => 0) {
  const incremental = new IncrementalConversation();
  const views: { conversation: Conversation; copy: unknown }[] = [];
  let held: WireEvent[] = [];
  let previous: Conversation | undefined;
  while (held.length < events.length) {
    const step = r() < 0.7 ? 1 : 1 + Math.floor(r() * 4);
    held = [...held, ...events.slice(held.length, held.length + step)];
    const conversation = incremental.update(held);
    expect(conversation).toEqual(buildConversation(held));
    // (checked after a one-event step: within a longer one a change can be undone, e.g. an
    // approval asked and cancelled, and the fold rightly gives new objects with old content)
    if (previous && step === 1) {
      // an item that did not change keeps its identity, so its memoized row skips its render
      const before = new Map(previous.items.map((i) => [i.key, i]));
      for (const item of conversation.items) {
        const old = before.get(item.key);
        if (old && JSON.stringify(old) === JSON.stringify(item)) expect(item).toBe(old);
      }
      // and the items array keeps its identity while no item changed (a text delta)
      if (JSON.stringify(previous.items) === JSON.stringify(conversation.items)) expect(conversation.items).toBe(previous.items);
    }
    views.push({ conversation, copy: frozen(conversation) });
    previous = conversation;
  }
  // no view was changed by the folds after it
  for (const view of views) expect(frozen(view.conversation)).toEqual(view.copy);
}

describe("IncrementalConversation", () => {
  it("equals a full rebuild after every append, on random logs", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = random(seed * 7919);
      foldStepByStep(randomLog(seed, 100), r);
    }
  }, 120_000);

  it("equals a full rebuild after every event of each protocol fixture", () => {
    const dir = path.join(process.cwd(), "server/shared/claude-protocol/fixtures");
    const names = readdirSync(dir).filter((f) => f.endsWith(".ndjson")).map((f) => f.slice(0, -7));
    expect(names.length).toBeGreaterThan(10);
    for (const name of names) foldStepByStep(fixtureLog(name));
  }, 120_000);

  it("folds again when the log is not an append: an earlier page, a replaced event, a reset", () => {
    const log = randomLog(99, 200);
    const incremental = new IncrementalConversation();
    expect(incremental.update(log.slice(100, 150))).toEqual(buildConversation(log.slice(100, 150)));
    // earlier events read above
    expect(incremental.update(log.slice(50, 160))).toEqual(buildConversation(log.slice(50, 160)));
    // a trimmed event loaded whole: same length, one event replaced
    const replaced = log.slice(50, 160).map((e) => (e.seq === 120 ? { ...e, payload: { type: "keep_alive" } } : e));
    expect(incremental.update(replaced)).toEqual(buildConversation(replaced));
    // a reset to a shorter log
    expect(incremental.update(log.slice(0, 10))).toEqual(buildConversation(log.slice(0, 10)));
    // the same array again: the same view
    const again = log.slice(0, 10);
    const first = incremental.update(again);
    expect(incremental.update(again)).toBe(first);
  });

  it("keeps showing unchanged items when earlier pages are read above, and stays exact afterwards", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const r = random(seed * 104729);
      const log = randomLog(seed, 160);
      const incremental = new IncrementalConversation();
      const views: { conversation: Conversation; copy: unknown }[] = [];
      // the live tail first, then pages read above it, with appends in between
      let start = 100;
      let end = 120;
      let previous = incremental.update(log.slice(start, end));
      while (start > 0 || end < log.length) {
        const readAbove = start > 0 && (end === log.length || r() < 0.4);
        if (readAbove) start = Math.max(0, start - 1 - Math.floor(r() * 30));
        else end = Math.min(log.length, end + 1 + Math.floor(r() * 3));
        const held = log.slice(start, end);
        const conversation = incremental.update(held);
        expect(conversation).toEqual(buildConversation(held));
        if (readAbove) {
          // an item that came out the same is the object shown before, so its row skips its render
          const before = new Map(previous.items.map((i) => [i.key, i]));
          for (const item of conversation.items) {
            const old = before.get(item.key);
            if (old && JSON.stringify(old) === JSON.stringify(item)) expect(item).toBe(old);
          }
        }
        views.push({ conversation, copy: frozen(conversation) });
        previous = conversation;
      }
      // no view was changed by what was folded after it
      for (const view of views) expect(frozen(view.conversation)).toEqual(view.copy);
    }
  }, 120_000);

  it("keeps the view itself for events that change nothing shown, and moves the mode only when it changes", () => {
    let seq = 0;
    const at = "2026-12-03T00:00:00.000Z";
    const cli = (payload: unknown): WireEvent => ({ seq: ++seq, sessionId: "s1", at, trimmed: false, kind: "cli", payload });
    const setMode = (mode: string): WireEvent => ({ seq: ++seq, sessionId: "s1", at, trimmed: false, kind: "set-mode", payload: { requested: mode, mode }, user: { id: "u1", name: "Ada" } });
    const init = (mode: string) => cli({ type: "system", subtype: "init", model: "m1", permissionMode: mode });
    const status = (mode: string) => cli({ type: "system", subtype: "status", status: "requesting", permissionMode: mode });
    const incremental = new IncrementalConversation();
    let log: WireEvent[] = [init("default")];
    const first = incremental.update(log);
    expect(first.mode).toEqual({ value: "default", seq: 1 });
    // a new turn's init, its status line and its stream's start, all naming what is held
    for (const e of [init("default"), status("default"), cli({ type: "stream_event", parent_tool_use_id: null, event: { type: "message_start", message: { id: "m" } } })]) {
      log = [...log, e];
      expect(incremental.update(log)).toBe(first);
    }
    // a confirmed switch is the mode from its seq; the CLI reporting the old one after it is a change back
    log = [...log, setMode("plan")];
    expect(incremental.update(log).mode).toEqual({ value: "plan", seq: 5 });
    log = [...log, status("plan")];
    expect(incremental.update(log).mode).toEqual({ value: "plan", seq: 5 });
    log = [...log, init("default")];
    expect(incremental.update(log).mode).toEqual({ value: "default", seq: 7 });
    expect(incremental.update(log)).toEqual(buildConversation(log));
  });

  it("extendsLog: an append only, by the same event objects", () => {
    const log = randomLog(5, 10);
    expect(extendsLog(log.slice(0, 5), log)).toBe(true);
    expect(extendsLog([], log)).toBe(true);
    expect(extendsLog(log, log.slice(0, 5))).toBe(false);
    expect(extendsLog(log.slice(0, 5), [...log.slice(0, 4), { ...log[4]! }, ...log.slice(5)])).toBe(false);
  });
});
