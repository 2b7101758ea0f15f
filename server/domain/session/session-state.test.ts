import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeLine } from "@/server/shared/claude-protocol/decode-line";
import type { CliMessage } from "@/server/shared/claude-protocol/messages";
import { createSessionState, isLive, reduceSessionState, type SessionEvent, type SessionState } from "./session-state";

const fixtures = fileURLToPath(new URL("../../shared/claude-protocol/fixtures/", import.meta.url));

interface Row {
  dir: "in" | "out";
  t: number;
  msg?: Record<string, unknown>;
}

function rows(name: string): Row[] {
  return readFileSync(`${fixtures}${name}.ndjson`, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Row);
}

function decode(value: unknown): CliMessage {
  const decoded = decodeLine(JSON.stringify(value));
  if (!decoded.ok) throw decoded.error;
  return decoded.message;
}

interface Step {
  row: Row;
  event: SessionEvent;
  state: SessionState;
}

/**
 * Replays a transcript's first process through the reducer the way the sidecar will drive it:
 * stdin prompts become `prompt-sent` (a made-up uuid when the capture sent none), every stdout
 * line a `message`, permission prompts and their answers/cancellations approval events.
 */
function replay(name: string): { steps: Step[]; final: SessionState } {
  let state = reduceSessionState(createSessionState(0), { type: "process-spawned" }, 0);
  const steps: Step[] = [];
  const pendingApprovals = new Set<string>();
  let anonymous = 0;
  const apply = (row: Row, event: SessionEvent) => {
    state = reduceSessionState(state, event, row.t);
    steps.push({ row, event, state });
  };
  for (const row of rows(name)) {
    const msg = row.msg;
    if (msg === undefined) continue;
    if (row.dir === "in") {
      if (msg.type === "user") {
        apply(row, { type: "prompt-sent", uuid: typeof msg.uuid === "string" ? msg.uuid : `no-uuid-${++anonymous}` });
      } else if (msg.type === "control_response") {
        const id = (msg.response as { request_id: string }).request_id;
        if (pendingApprovals.delete(id)) apply(row, { type: "approval-resolved", requestId: id });
      }
      continue;
    }
    const message = decode(msg);
    apply(row, { type: "message", message });
    if (message.type === "control_request" && message.request.subtype === "can_use_tool") {
      pendingApprovals.add(message.request_id);
      apply(row, { type: "approval-requested", requestId: message.request_id, toolName: message.request.tool_name });
    }
    if (message.type === "control_cancel_request" && pendingApprovals.delete(message.request_id)) {
      apply(row, { type: "approval-cancelled", requestId: message.request_id });
    }
  }
  return { steps, final: state };
}

/** Status after each result line. */
const statusesAfterResults = (steps: Step[]) =>
  steps.filter((s) => s.event.type === "message" && s.event.message.type === "result").map((s) => s.state.status);

describe("session state over captured transcripts", () => {
  it("three turns on one process: running per prompt, idle after each result", () => {
    const { steps, final } = replay("startup-multiturn");
    const prompts = steps.filter((s) => s.event.type === "prompt-sent");
    expect(prompts.map((s) => s.state.status)).toEqual(["running", "running", "running"]);
    expect(statusesAfterResults(steps)).toEqual(["idle", "idle", "idle"]);
    expect(final).toMatchObject({ status: "idle", pendingPrompts: [], turn: null, model: "claude-opus-5-5" });
    expect(final.claudeSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(final.lastTurn).toMatchObject({ isError: false, subtype: "success", unsolicited: false });
  });

  it("coalesced prompts: three sends, two results, the second answering two prompts", () => {
    const { steps, final } = replay("queue-while-running");
    const sent = steps.filter((s) => s.event.type === "prompt-sent").map((s) => (s.event as { uuid: string }).uuid);
    expect(sent).toHaveLength(3);
    const results = steps.filter((s) => s.event.type === "message" && s.event.message.type === "result");
    // After the first result the two queued prompts still wait: the session is not idle.
    expect(results[0]?.state).toMatchObject({ status: "running", lastTurn: { promptUuids: [sent[0]] } });
    expect(results[0]?.state.pendingPrompts.map((p) => [p.uuid, p.phase])).toEqual([
      [sent[1], "queued"],
      [sent[2], "queued"],
    ]);
    expect(results[1]?.state).toMatchObject({ status: "idle", lastTurn: { promptUuids: [sent[1], sent[2]] } });
    expect(final).toMatchObject({ status: "idle", pendingPrompts: [] });
  });

  it("a prompt sent during a tool is folded into the running turn", () => {
    const { steps, final } = replay("queue-during-tool");
    const sent = steps.filter((s) => s.event.type === "prompt-sent").map((s) => (s.event as { uuid: string }).uuid);
    const folded = steps.find(
      (s) =>
        s.event.type === "message" &&
        s.event.message.type === "command_lifecycle" &&
        s.event.message.state === "started" &&
        s.event.message.command_uuid === sent[1],
    );
    expect(folded?.state.turn?.promptUuids).toEqual([sent[0], sent[1]]);
    expect(statusesAfterResults(steps)).toEqual(["idle"]);
    expect(final.lastTurn?.promptUuids).toEqual([sent[0], sent[1]]);
  });

  it("a background subagent's unsolicited turn and late permission prompt do not break the state", () => {
    const { steps, final } = replay("subagent");
    expect(steps.some((s) => s.state.status === "awaiting-approval")).toBe(true);
    const inits = steps.filter(
      (s) => s.event.type === "message" && s.event.message.type === "system" && s.event.message.subtype === "init",
    );
    expect(inits.map((s) => s.state.turn?.unsolicited)).toEqual([false, true]);
    expect(statusesAfterResults(steps)).toEqual(["idle", "idle"]);
    expect(final).toMatchObject({ status: "idle", pendingPrompts: [], pendingApprovals: [] });
    expect(final.lastTurn).toMatchObject({ unsolicited: true, promptUuids: [] });
  });

  it("interrupt while a permission prompt is pending: cancelled approval, error result, idle, next turn fine", () => {
    const { steps, final } = replay("interrupt-pending-permission");
    const statuses = steps.map((s) => s.state.status);
    expect(statuses).toContain("awaiting-approval");
    const cancelled = steps.find((s) => s.event.type === "approval-cancelled");
    expect(cancelled?.state).toMatchObject({ status: "running", pendingApprovals: [] });
    const results = steps.filter((s) => s.event.type === "message" && s.event.message.type === "result");
    expect(results[0]?.state).toMatchObject({
      status: "idle",
      lastTurn: { isError: true, subtype: "error_during_execution" },
    });
    expect(final).toMatchObject({ status: "idle", lastTurn: { isError: false } });
  });

  it("interrupt while streaming, with lifecycle frames", () => {
    const { steps, final } = replay("interrupt-streaming");
    expect(statusesAfterResults(steps)).toEqual(["idle", "idle"]);
    expect(final.pendingPrompts).toEqual([]);
  });

  it("priority now, cancel_queued, cancel_async_message and shouldQuery:false all end idle", () => {
    const { steps, final } = replay("queue-priority");
    expect(statusesAfterResults(steps).at(-1)).toBe("idle");
    expect(final).toMatchObject({ status: "idle", pendingPrompts: [], turn: null });
  });

  it("/clear: the claude session id changes, the old one is kept", () => {
    const { steps, final } = replay("slash-commands");
    const reset = steps.find((s) => s.event.type === "message" && s.event.message.type === "conversation_reset");
    const first = steps.find((s) => s.state.claudeSessionId !== null)?.state.claudeSessionId;
    expect(reset?.state.claudeSessionId).toBeNull();
    expect(final.claudeSessionId).not.toBeNull();
    expect(final.claudeSessionId).not.toBe(first);
    expect(final.previousClaudeSessionIds).toEqual([first]);
    expect(final.status).toBe("idle");
  });

  it("permission mode follows system/status frames", () => {
    const initMsg = decode({ type: "system", subtype: "init", session_id: "s1", model: "m", permissionMode: "plan" });
    const status = decode({ type: "system", subtype: "status", status: null, permissionMode: "default" });
    let state = reduceSessionState(createSessionState(0), { type: "process-spawned" }, 0);
    state = reduceSessionState(state, { type: "message", message: initMsg }, 1);
    expect(state.permissionMode).toBe("plan");
    state = reduceSessionState(state, { type: "message", message: status }, 2);
    expect(state.permissionMode).toBe("default");
  });
});

describe("session lifecycle", () => {
  const P1 = "11111111-1111-4111-8111-111111111111";
  const started = () =>
    reduceSessionState(createSessionState(0), { type: "process-spawned", claudeSessionId: "sess-a" }, 10);
  const result = (uuids: string[], isError = false) =>
    decode({
      type: "result",
      subtype: isError ? "error_during_execution" : "success",
      is_error: isError,
      user_message_uuids: uuids,
    });

  it("starts in starting, becomes idle on spawn with the resumed id", () => {
    const initial = createSessionState(0);
    expect(initial).toMatchObject({ status: "starting", restartAttempt: 0, processRunning: false });
    expect(isLive(initial)).toBe(false);
    const state = started();
    expect(state).toMatchObject({ status: "idle", claudeSessionId: "sess-a", processRunning: true, since: 10 });
    expect(isLive(state)).toBe(true);
  });

  it("returns the same object for events that do not apply", () => {
    const initial = createSessionState(0);
    expect(reduceSessionState(initial, { type: "prompt-sent", uuid: P1 }, 1)).toBe(initial);
    const idle = started();
    expect(reduceSessionState(idle, { type: "process-spawned" }, 11)).toBe(idle);
    expect(reduceSessionState(idle, { type: "silence-watchdog-fired" }, 11)).toBe(idle);
    expect(reduceSessionState(idle, { type: "restart-scheduled", delayMs: 100 }, 11)).toBe(idle);
    expect(reduceSessionState(idle, { type: "approval-resolved", requestId: "nope" }, 11)).toBe(idle);
    const running = reduceSessionState(idle, { type: "prompt-sent", uuid: P1 }, 12);
    expect(reduceSessionState(running, { type: "prompt-sent", uuid: P1 }, 13)).toBe(running);
  });

  it("watchdog: running → stalled, CLI output → running again; never while awaiting approval", () => {
    let state = reduceSessionState(started(), { type: "prompt-sent", uuid: P1 }, 100);
    state = reduceSessionState(state, { type: "silence-watchdog-fired" }, 400_100);
    expect(state).toMatchObject({ status: "stalled", silentSince: 100, since: 400_100 });
    // A decision or prompt does not prove the CLI alive; output does.
    const stillStalled = reduceSessionState(
      state,
      { type: "prompt-sent", uuid: "22222222-2222-4222-8222-222222222222" },
      400_200,
    );
    expect(stillStalled.status).toBe("stalled");
    state = reduceSessionState(stillStalled, { type: "message", message: decode({ type: "keep_alive" }) }, 400_300);
    expect(state).toMatchObject({ status: "running", lastActivityAt: 400_300 });
    state = reduceSessionState(state, { type: "approval-requested", requestId: "r1", toolName: "Bash" }, 400_400);
    expect(state.status).toBe("awaiting-approval");
    expect(reduceSessionState(state, { type: "silence-watchdog-fired" }, 900_000)).toBe(state);
    state = reduceSessionState(state, { type: "approval-resolved", requestId: "r1" }, 900_001);
    expect(state).toMatchObject({ status: "running", lastActivityAt: 900_001 });
  });

  it("crash → restart → crash … → dead after the budget", () => {
    const budget = 5;
    let state = reduceSessionState(started(), { type: "prompt-sent", uuid: P1 }, 20);
    let now = 20;
    for (let attempt = 1; attempt <= budget; attempt++) {
      now += 100;
      state = reduceSessionState(
        state,
        { type: "process-exited", code: null, signal: "SIGKILL", expected: false },
        now,
      );
      expect(state).toMatchObject({ status: "crashed", processRunning: false, pendingPrompts: [] });
      if (attempt === 1) expect(state).toMatchObject({ lostPromptUuids: [P1] });
      state = reduceSessionState(state, { type: "restart-scheduled", delayMs: 1000 }, now);
      expect(state).toMatchObject({
        status: "starting",
        restartAttempt: attempt,
        restartAt: now + 1000,
        consecutiveRestarts: attempt,
      });
      now += 1000;
      state = reduceSessionState(state, { type: "process-spawned" }, now);
      // --resume keeps the id the crashed process had.
      expect(state).toMatchObject({ status: "idle", claudeSessionId: "sess-a" });
    }
    state = reduceSessionState(state, { type: "process-exited", code: 1, signal: null, expected: false }, now + 1);
    expect(state.consecutiveRestarts).toBe(budget);
    state = reduceSessionState(state, { type: "restart-budget-exhausted" }, now + 2);
    expect(state).toMatchObject({
      status: "dead",
      exit: { code: 1, expected: false },
      reason: "the CLI crashed again after 5 restarts in a row (the restart budget), so it is not restarted any more",
    });
    // Dead is final.
    expect(reduceSessionState(state, { type: "process-spawned" }, now + 3)).toBe(state);
    expect(reduceSessionState(state, { type: "prompt-sent", uuid: P1 }, now + 3)).toBe(state);
  });

  it("a completed turn resets the restart count", () => {
    let state = reduceSessionState(started(), { type: "process-exited", code: 1, signal: null, expected: false }, 20);
    state = reduceSessionState(state, { type: "restart-scheduled", delayMs: 0 }, 20);
    state = reduceSessionState(state, { type: "process-spawned" }, 21);
    expect(state.consecutiveRestarts).toBe(1);
    state = reduceSessionState(state, { type: "prompt-sent", uuid: P1 }, 22);
    state = reduceSessionState(state, { type: "message", message: result([P1]) }, 23);
    expect(state).toMatchObject({ status: "idle", consecutiveRestarts: 0 });
  });

  it("stop: flagged while the process runs, stopped on exit (even with a non-zero code), resumed on spawn", () => {
    let state = reduceSessionState(started(), { type: "prompt-sent", uuid: P1 }, 20);
    state = reduceSessionState(state, { type: "stop-requested" }, 30);
    expect(state).toMatchObject({ status: "running", stopRequestedAt: 30 });
    state = reduceSessionState(state, { type: "process-exited", code: 143, signal: null, expected: false }, 40);
    expect(state).toMatchObject({ status: "stopped", exit: { code: 143, expected: true }, pendingPrompts: [] });
    expect(reduceSessionState(state, { type: "restart-scheduled", delayMs: 0 }, 41)).toBe(state);
    state = reduceSessionState(state, { type: "process-spawned", claudeSessionId: "sess-a" }, 50);
    expect(state).toMatchObject({ status: "idle", stopRequestedAt: null, claudeSessionId: "sess-a" });
  });

  it("stop while crashed cancels the restart", () => {
    let state = reduceSessionState(started(), { type: "process-exited", code: 1, signal: null, expected: false }, 20);
    state = reduceSessionState(state, { type: "stop-requested" }, 21);
    expect(state).toMatchObject({ status: "stopped", exit: { code: 1, expected: false } });
  });

  it("an expected exit (stdin closed by us) is a stop, not a crash", () => {
    const state = reduceSessionState(started(), { type: "process-exited", code: 0, signal: null, expected: true }, 20);
    expect(state).toMatchObject({ status: "stopped", exit: { code: 0, expected: true } });
  });

  it("an approval outlives its turn's result (subagent) and keeps the session awaiting", () => {
    let state = reduceSessionState(started(), { type: "prompt-sent", uuid: P1 }, 20);
    state = reduceSessionState(state, { type: "approval-requested", requestId: "sub-1", toolName: "Bash" }, 21);
    state = reduceSessionState(state, { type: "message", message: result([P1]) }, 22);
    expect(state).toMatchObject({ status: "awaiting-approval", pendingPrompts: [] });
    state = reduceSessionState(state, { type: "approval-resolved", requestId: "sub-1" }, 23);
    expect(state.status).toBe("idle");
  });

  it("a result with an error still answers its prompts", () => {
    let state = reduceSessionState(started(), { type: "prompt-sent", uuid: P1 }, 20);
    state = reduceSessionState(state, { type: "message", message: result([P1], true) }, 21);
    expect(state).toMatchObject({ status: "idle", lastTurn: { isError: true, promptUuids: [P1] } });
  });

  it("ignores stdout after the exit", () => {
    const exited = reduceSessionState(started(), { type: "process-exited", code: 0, signal: null, expected: true }, 20);
    expect(reduceSessionState(exited, { type: "message", message: result([]) }, 21)).toBe(exited);
  });
});
