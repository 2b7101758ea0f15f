#!/usr/bin/env node
// The CLI stand-in for bench/approval-rtt.ts: per user message it asks `--asks N` can_use_tool
// questions one after the other, timing each from just before its control_request is written to
// the moment the control_response line arrives, and reports the timings (µs) as the result text.
// A user message containing "warm-up" asks `--warm-asks N` questions back to back instead.
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(name);
  return index === -1 ? fallback : argv[index + 1];
};
const asks = Number(option("--asks", "20"));
const warmAsks = Number(option("--warm-asks", "0"));
// Pause between questions (ms, ±50% jitter): like a model that works between tool calls.
const gapMs = Number(option("--gap-ms", "0"));
const sessionId = option("--session-id", undefined) ?? option("--resume", undefined) ?? randomUUID();
const print = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

let turn;

function ask() {
  const requestId = randomUUID();
  turn.requestId = requestId;
  turn.sentAt = process.hrtime.bigint();
  print({
    type: "control_request",
    request_id: requestId,
    request: {
      subtype: "can_use_tool",
      tool_name: "Bash",
      input: { command: `echo ${turn.timings.length}` },
      tool_use_id: `toolu_${randomUUID()}`,
    },
  });
}

/** Ends the turn with a result carrying its timings. */
function finish() {
  print({
    type: "result",
    subtype: "success",
    is_error: false,
    result: JSON.stringify(turn.timings),
    num_turns: 1,
    session_id: sessionId,
    total_cost_usd: 0,
    uuid: randomUUID(),
    user_message_uuid: turn.uuid,
    user_message_uuids: [turn.uuid],
  });
  turn = undefined;
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  const message = JSON.parse(line);
  if (message.type === "control_request") {
    print({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: message.request_id,
        response: message.request?.subtype === "set_permission_mode" ? { mode: message.request.mode } : {},
      },
    });
  } else if (message.type === "control_response") {
    if (!turn || message.response?.request_id !== turn.requestId) return;
    turn.timings.push(Number((process.hrtime.bigint() - turn.sentAt) / 1000n));
    if (turn.timings.length >= turn.asks) return finish();
    if (turn.gapMs <= 0) return ask();
    setTimeout(ask, turn.gapMs * (0.5 + Math.random()));
  } else if (message.type === "user") {
    print({
      type: "system",
      subtype: "init",
      session_id: sessionId,
      model: "fake-model",
      permissionMode: "default",
      cwd: process.cwd(),
      tools: ["Bash"],
    });
    const warm = line.includes("warm-up");
    turn = { uuid: message.uuid, timings: [], asks: warm ? warmAsks : asks, gapMs: warm ? 0 : gapMs };
    if (turn.asks <= 0) return finish();
    // The first question comes after a pause like the later ones.
    if (turn.gapMs <= 0) ask();
    else setTimeout(ask, turn.gapMs * Math.random());
  }
});
lines.on("close", () => process.exit(0));
