import { describe, expect, it } from "vitest";
import { buildConversation } from "./conversation";
import { ev, fixtureLog } from "./test-support";

const upTo = <T extends { seq: number }>(events: T[], pred: (e: T) => boolean) =>
  events.slice(0, events.findIndex(pred) + 1);

describe("buildConversation", () => {
  it("streams partial text, then replaces it with the final block", () => {
    const log = fixtureLog("partial-messages");
    const firstDelta = upTo(
      log,
      (e) => (e.payload as { event?: { type?: string } }).event?.type === "content_block_delta",
    );
    const streaming = buildConversation(firstDelta);
    expect(streaming.partials.map((p) => p.text)).toEqual(["I will run a command."]);
    expect(streaming.items.filter((i) => i.kind === "assistant")).toHaveLength(0);

    const whole = buildConversation(log);
    expect(whole.partials).toEqual([]);
    const kinds = whole.items.map((i) => i.kind);
    expect(kinds.filter((k) => k === "user")).toHaveLength(2);
    expect(kinds.filter((k) => k === "turn-end")).toHaveLength(2);
    const assistant = whole.items
      .filter((i) => i.kind === "assistant")
      .map((i) => (i.kind === "assistant" ? i.text : ""));
    expect(assistant[0]).toBe("I will run a command.");
    expect(assistant.at(-1)).toBe("Thought about it.");
    const tool = whole.items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.name).toBe("Bash");
    expect(tool?.kind === "tool" && tool.result?.isError).toBe(false);
    expect(tool?.kind === "tool" && tool.approval).toBeUndefined();
    expect(whole.mode?.value).toBe("default");
    expect(whole.costUsd).toBeGreaterThan(0);
    expect(whole.tokens.input).toBeGreaterThan(0);
  });

  it("names who decided a tool call, and says what happened when nobody did (a rule, the deadline)", () => {
    const decided = buildConversation([
      { ...ev(1, "decision", { requestId: "r1", toolName: "Bash", behavior: "allow" }), user: { id: "u1", name: "Ada" } },
      ev(2, "decision", { requestId: "r2", toolName: "Write", behavior: "deny", message: "Nobody answered within 60 s." }),
      ev(3, "decision", { requestId: "r3", behavior: "allow" }),
    ]);
    const notices = decided.items.flatMap((i) => (i.kind === "notice" ? [[i.text, i.detail]] : []));
    expect(notices).toEqual([
      ["Ada allowed Bash.", undefined],
      ["Write was denied.", "Nobody answered within 60 s."],
      ["A tool call was allowed.", undefined],
    ]);
  });

  it("shows the pending approval on the tool card until it is answered", () => {
    const log = fixtureLog("partial-messages");
    const asking = upTo(log, (e) => (e.payload as { type?: string }).type === "control_request");
    const tool = buildConversation(asking).items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.approval?.toolName).toBe("Bash");
  });

  it("shows an interrupted stream as cut short, then interrupted", () => {
    const log = fixtureLog("interrupt-streaming");
    const midStream = log.slice(0, 30);
    expect(buildConversation(midStream).partials[0]?.text).toMatch(/^(word )+$/);
    const whole = buildConversation(log);
    expect(whole.partials).toEqual([]);
    const aborted = whole.items.find((i) => i.kind === "assistant");
    expect(aborted?.kind === "assistant" && aborted.aborted).toBe(true);
    expect(whole.items.some((i) => i.kind === "notice" && i.text.includes("nterrupted"))).toBe(false);
    const ends = whole.items.filter((i) => i.kind === "turn-end");
    expect(ends[0]?.kind === "turn-end" && ends[0].interrupted).toBe(true);
    expect(ends[0]?.kind === "turn-end" && ends[0].isError).toBe(false);
  });

  it("clears an approval the CLI cancelled and marks the rejected tool as an error", () => {
    const whole = buildConversation(fixtureLog("interrupt-pending-permission"));
    const tool = whole.items.find((i) => i.kind === "tool");
    expect(tool?.kind === "tool" && tool.approval).toBeUndefined();
    expect(tool?.kind === "tool" && tool.result?.isError).toBe(true);
    expect(whole.items.some((i) => i.kind === "approval")).toBe(false);
  });

  it("shows API retries and the final API error", () => {
    const whole = buildConversation(fixtureLog("api-500-exhausted"));
    const warnings = whole.items.filter((i) => i.kind === "notice" && i.tone === "warning");
    expect(warnings).toHaveLength(2);
    expect(warnings[0]?.kind === "notice" && warnings[0].text).toContain("API error 500 (server_error)");
    expect(whole.items.some((i) => i.kind === "notice" && i.tone === "error" && i.text.includes("API Error"))).toBe(
      true,
    );
    const ends = whole.items.filter((i) => i.kind === "turn-end");
    expect(ends[0]?.kind === "turn-end" && ends[0].isError).toBe(true);
    // The API error shows once, not again in the turn's end.
    expect(ends[0]?.kind === "turn-end" && ends[0].text).toBe("The turn failed (API 500).");
    expect(ends[1]?.kind === "turn-end" && ends[1].isError).toBe(false);
  });

  it("attributes prompts and commands to their senders", () => {
    const items = buildConversation([
      { ...ev(1, "prompt", { text: "hello" }), user: { id: "u2", name: "Bea" } },
      {
        ...ev(2, "set-mode", { requested: "acceptEdits", mode: "acceptEdits", live: true }),
        user: { id: "u2", name: "Bea" },
      },
      { ...ev(3, "interrupt", {}), user: { id: "u1", name: "Ada" } },
      {
        ...ev(4, "set-mode", { requested: "plan", error: { code: "cli_error", message: "refused" } }),
        user: { id: "u1", name: "Ada" },
      },
    ]).items;
    expect(items[0]).toMatchObject({ kind: "user", author: "Bea", text: "hello" });
    expect(items[1]).toMatchObject({ kind: "notice", text: "Bea switched the permission mode to acceptEdits." });
    expect(items[2]).toMatchObject({ kind: "notice", text: "Ada pressed Stop." });
    expect(items[3]).toMatchObject({
      kind: "notice",
      tone: "warning",
      text: "Ada could not switch the permission mode to plan: refused.",
    });
  });

  it("says a CLI stopped at its memory cap was, rather than a generic crash", () => {
    const reason = "The CLI was stopped for exceeding the session's memory cap of 200 MB (CONDUIT_SESSION_MEMORY_MB).";
    const items = buildConversation([
      ev(1, "process", { phase: "exited", pid: 7, code: null, signal: "SIGKILL", expected: false, reason }),
      ev(2, "process", { phase: "exited", pid: 8, code: null, signal: "SIGKILL", expected: false }),
    ]).items;
    expect(items[0]).toMatchObject({ kind: "notice", tone: "error", text: reason });
    expect(items[1]).toMatchObject({ kind: "notice", tone: "error", text: "The CLI process exited unexpectedly (signal SIGKILL)." });
  });

  it("says why a session ended for good, and keeps the reason for the prompt box", () => {
    const reason = "Claude Code has no saved conversation abc to resume (its transcript is gone), so it cannot continue";
    const before = buildConversation([ev(1, "process", { phase: "exited", pid: 7, code: 1, signal: null, expected: false })]);
    expect(before.endedReason).toBeUndefined();
    const c = buildConversation([
      ev(1, "process", { phase: "exited", pid: 7, code: 1, signal: null, expected: false }),
      ev(2, "process", { phase: "dead", reason }),
    ]);
    expect(c.items.at(-1)).toMatchObject({ kind: "notice", tone: "error", text: `This session has ended: ${reason}. Start a new session to go on.` });
    expect(c.endedReason).toBe(reason);
  });

  it("never throws on odd payloads", () => {
    const odd = [
      ev(1, "cli", null),
      ev(2, "cli", "text"),
      ev(3, "cli", { type: "assistant" }),
      ev(4, "cli", { type: "user", message: { content: 5 } }),
      ev(5, "process", 7),
      { ...ev(6, "cli", "…"), trimmed: true },
    ];
    const c = buildConversation(odd);
    expect(c.items.map((i) => i.kind)).toEqual(["trimmed"]);
  });
});

describe("prompts sent while a turn runs", () => {
  const prompt = (seq: number, uuid: string, text: string) => ({ ...ev(seq, "prompt", { text, uuid }), user: { id: "u1", name: "Ada" } });
  const lifecycle = (seq: number, uuid: string, state: string) => ev(seq, "cli", { type: "command_lifecycle", command_uuid: uuid, state });
  const assistant = (seq: number, text: string) =>
    ev(seq, "cli", { type: "assistant", message: { id: `m${seq}`, role: "assistant", content: [{ type: "text", text }] } });
  const result = (seq: number) => ev(seq, "cli", { type: "result", subtype: "success", is_error: false, duration_ms: 1, terminal_reason: "completed" });
  const order = (items: ReturnType<typeof buildConversation>["items"]) =>
    items.flatMap((i) => (i.kind === "user" ? [`user:${i.text}${i.queued ? " (queued)" : ""}`] : i.kind === "assistant" ? [`assistant:${i.text}`] : i.kind === "turn-end" ? ["end"] : []));

  const log = [
    prompt(1, "a", "first"),
    lifecycle(2, "a", "queued"),
    lifecycle(3, "a", "started"),
    prompt(4, "b", "second"),
    lifecycle(5, "b", "queued"),
    assistant(6, "answer to first"),
    lifecycle(7, "b", "started"),
    assistant(8, "answer to second"),
    result(9),
  ];

  it("keeps a queued prompt aside (flagged) until the CLI takes it in, then draws it there", () => {
    expect(order(buildConversation(log.slice(0, 6)).items)).toEqual(["user:first", "user:second (queued)", "assistant:answer to first"]);
    expect(order(buildConversation(log).items)).toEqual(["user:first", "assistant:answer to first", "user:second", "assistant:answer to second", "end"]);
  });

  it("draws a prompt the CLI cancelled, or lost with its process, where that happened", () => {
    const cancelled = buildConversation([...log.slice(0, 6), lifecycle(7, "b", "cancelled"), result(8)]);
    expect(order(cancelled.items)).toEqual(["user:first", "assistant:answer to first", "user:second", "end"]);
    const lost = buildConversation([...log.slice(0, 6), ev(7, "process", { phase: "exited", code: 1 })]);
    expect(order(lost.items)).toEqual(["user:first", "assistant:answer to first", "user:second"]);
  });

  it("flags nothing for a prompt sent with no turn running, nor past the turn with a CLI that says nothing of its queue", () => {
    expect(order(buildConversation([prompt(1, "a", "first"), assistant(2, "hi"), result(3), prompt(4, "b", "again")]).items)).toEqual([
      "user:first",
      "assistant:hi",
      "end",
      "user:again",
    ]);
    const quiet = buildConversation([prompt(1, "a", "first"), prompt(2, "b", "second"), assistant(3, "hi"), result(4)]);
    // an older CLI runs it as the next turn
    expect(order(quiet.items)).toEqual(["user:first", "assistant:hi", "end", "user:second"]);
  });
});
