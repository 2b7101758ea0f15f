#!/usr/bin/env node
// A stand-in for the `claude` CLI, for tests only: it replays a recording of the real CLI
// (../shared/transcripts-real/*.jsonl, one stream-json object per line) to Conduit, turn by turn,
// with Conduit's ids. Plain JavaScript so that it starts in tens of milliseconds (no loader).
// The real CLI stays what users run and what the protocol tests use.
//
//   node test/replay-cli/replay-cli.mjs [--replay-dir DIR] [--replay-file FILE] [claude flags…]
//
// Which recording: --replay-file, else the first user message names one as `[replay:<file name>]`
// (a name in --replay-dir, default <repo>/../shared/transcripts-real). Then:
// - Lines marked `"_dir":"out"` are what the recording's host wrote to the CLI. A host `user`
//   line is a turn start: the replay waits there for Conduit's next user message (a recording
//   without one, a `-p` run, starts on Conduit's first message). The host's own control requests
//   (initialize, set_max_thinking_tokens, interrupt…) and the CLI's answers to them are skipped:
//   Conduit did not send them. The host's answers to the CLI's requests are skipped too: the
//   replay waits for Conduit's own answer instead.
// - Every CLI line is written with Conduit's ids: `session_id` is the id Conduit gave
//   (--session-id / --resume), each `uuid` a fresh one (a recording replayed twice must not
//   collide with itself), each control request a fresh `request_id` whose answer from Conduit
//   the replay waits for; the CLI's echo of the host's answer carries Conduit's answer. A
//   result names the prompt it answers (`user_message_uuid(s)`), as the real CLI does for
//   prompts sent with a uuid; `system/init` reports the permission mode Conduit set.
// - Conduit's own control requests are answered as the real CLI does (protocol reference §5.2):
//   interrupt ends the turn being replayed (`error_during_execution`, `aborted_streaming`) and
//   skips the rest of that recorded turn; set_permission_mode answers `{mode}` and reports
//   `system/status`; unknown subtypes get `unsupported_request`.
// - Past the recording's end, every prompt gets a one-line assistant answer and a result.
//
// --replay-line-delay-ms N waits N ms between written lines (default 0: a turn is written at once).
// --replay-timing-file F appends `<n> <ms since epoch>` to F when a recorded turn's last line is
// written (bench/replay.ts measures from it); stderr says the same as `replay-cli: turn-written …`.
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(name);
  return index === -1 ? fallback : argv[index + 1];
};
const here = path.dirname(fileURLToPath(import.meta.url));
const replayDir = path.resolve(option("--replay-dir", path.resolve(here, "../../../shared/transcripts-real")));
const lineDelayMs = Number(option("--replay-line-delay-ms", "0"));
const timingFile = option("--replay-timing-file", undefined);
const sessionId = option("--session-id", undefined) ?? option("--resume", undefined) ?? randomUUID();
const allowBypass = argv.includes("--allow-dangerously-skip-permissions") || argv.includes("--dangerously-skip-permissions");
let permissionMode = option("--permission-mode", "default");

if (argv.includes("--version") || argv.includes("-v")) {
  // the sidecar asks at startup; the pinned CLI's version, as the stand-in speaks its protocol
  let version = "2.1.332";
  try {
    const pinned = JSON.parse(readFileSync(path.resolve(here, "../../package.json"), "utf8")).dependencies?.["@anthropic-ai/claude-code"];
    if (typeof pinned === "string" && /^\d+\.\d+\.\d+/.test(pinned)) version = pinned;
  } catch {
    // the default stands
  }
  process.stdout.write(`${version} (Claude Code; replay stand-in)\n`);
  process.exit(0);
}

process.stderr.write(`replay-cli argv: ${argv.join(" ")}\n`);

function write(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** The recording: `{ out, value }` per non-blank line, in order. */
let recording;
let recordingName;
/** Where the replay is in the recording. */
let cursor = 0;
/** Conduit's user messages not yet matched with a recorded host `user` line (their uuids). */
const credits = [];
/** The uuid of the prompt the recorded turn being written answers. */
let turnPrompt;
/** True between a recorded turn's start and its result. */
let inTurn = false;
/** The id (Conduit's side) of the CLI request whose answer the replay waits for. */
let waitingFor;
/** Recorded request id → the id written to Conduit, and Conduit's answers by recorded id. */
const requestIds = new Map();
const answers = new Map();
/** Request ids of the recording host's own control requests: the CLI's answers to them are skipped. */
const hostRequestIds = new Set();
const uuids = new Map();
let turnsWritten = 0;
let pumping = false;

function loadRecording(name) {
  const file = path.resolve(replayDir, path.basename(name));
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const value = JSON.parse(line);
      const out = value._dir === "out";
      return { out, value };
    });
  // a `-p` recording holds no host lines: its one prompt is Conduit's first message
  if (!lines.some((line) => line.out && line.value.type === "user")) {
    lines.unshift({ out: true, value: { type: "user", message: { role: "user", content: "" } } });
  }
  recording = lines;
  recordingName = path.basename(file);
  process.stderr.write(`replay-cli: replaying ${recordingName} (${lines.length} lines)\n`);
}

function freshUuid(old) {
  if (typeof old !== "string") return randomUUID();
  // a fresh id per line: some recordings hold placeholder uuids repeated on every line
  const next = randomUUID();
  uuids.set(old, next);
  return next;
}

/** A recorded CLI line as Conduit's CLI would write it. */
function rewrite(value) {
  const line = { ...value };
  delete line._dir;
  if ("session_id" in line) line.session_id = sessionId;
  if ("uuid" in line) line.uuid = freshUuid(line.uuid);
  for (const key of ["parent_uuid", "logical_parent_uuid"]) {
    if (typeof line[key] === "string") line[key] = uuids.get(line[key]) ?? line[key];
  }
  if (line.type === "system" && line.subtype === "init") line.permissionMode = permissionMode;
  if (line.type === "result") {
    delete line.user_message_uuid;
    delete line.user_message_uuids;
    if (turnPrompt) Object.assign(line, { user_message_uuid: turnPrompt, user_message_uuids: [turnPrompt] });
  }
  return line;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes recorded lines until the replay has to wait (a turn start without a prompt, an unanswered request). */
async function pump() {
  if (pumping || !recording) return;
  pumping = true;
  try {
    while (cursor < recording.length && waitingFor === undefined) {
      const { out, value } = recording[cursor];
      if (out) {
        if (value.type === "user") {
          if (credits.length === 0) break;
          turnPrompt = credits.shift();
          inTurn = true;
        } else if (value.type === "control_request" && typeof value.request_id === "string") {
          hostRequestIds.add(value.request_id);
        }
        // the host's answers to the CLI's requests: Conduit answered already
        cursor++;
        continue;
      }
      cursor++;
      if (value.type === "control_response") {
        const recordedId = value.response?.request_id;
        if (hostRequestIds.has(recordedId)) continue;
        // the CLI echoes the host's answer: Conduit's answer, under Conduit's id
        const answer = answers.get(recordedId);
        if (answer) write({ ...rewrite(value), response: answer });
        else write(rewrite(value));
      } else if (value.type === "control_request" && typeof value.request_id === "string") {
        const id = randomUUID();
        requestIds.set(value.request_id, id);
        waitingFor = { id, recordedId: value.request_id };
        write({ ...rewrite(value), request_id: id });
      } else if (value.type === "control_cancel_request" && typeof value.request_id === "string") {
        write({ ...rewrite(value), request_id: requestIds.get(value.request_id) ?? value.request_id });
      } else {
        write(rewrite(value));
      }
      if (value.type === "result") endOfTurn();
      if (lineDelayMs > 0) await sleep(lineDelayMs);
    }
    if (cursor >= recording.length && waitingFor === undefined) {
      if (inTurn) endOfTurn();
      // past the end: every further prompt gets a plain answer
      while (credits.length > 0) plainTurn(credits.shift(), `(the recording ${recordingName} has ended)`);
    }
  } finally {
    pumping = false;
  }
}

function endOfTurn() {
  inTurn = false;
  turnsWritten++;
  const now = Date.now();
  if (timingFile) appendFileSync(timingFile, `${turnsWritten} ${now}\n`);
  process.stderr.write(`replay-cli: turn-written ${turnsWritten} ${now}\n`);
}

function plainTurn(uuid, text) {
  write({ type: "system", subtype: "init", session_id: sessionId, model: "replay", permissionMode, cwd: process.cwd(), tools: [], uuid: randomUUID() });
  write({
    type: "assistant",
    message: { id: `msg_${randomUUID()}`, type: "message", role: "assistant", model: "replay", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
  });
  write({
    type: "result",
    subtype: "success",
    is_error: false,
    result: text,
    num_turns: 1,
    session_id: sessionId,
    total_cost_usd: 0,
    uuid: randomUUID(),
    ...(uuid ? { user_message_uuid: uuid, user_message_uuids: [uuid] } : {}),
  });
}

/** Interrupt: the turn being replayed ends as the real CLI ends an interrupted one, and its rest is skipped. */
function interruptTurn() {
  if (!recording || !inTurn) return;
  const pending = waitingFor;
  waitingFor = undefined;
  if (pending) write({ type: "control_cancel_request", request_id: pending.id });
  while (cursor < recording.length) {
    const { out, value } = recording[cursor];
    if (out && value.type === "user") break;
    cursor++;
    if (!out && value.type === "result") break;
  }
  write({
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    num_turns: 0,
    duration_ms: 0,
    duration_api_ms: 0,
    terminal_reason: "aborted_streaming",
    errors: [],
    session_id: sessionId,
    uuid: randomUUID(),
    ...(turnPrompt ? { user_message_uuid: turnPrompt, user_message_uuids: [turnPrompt] } : {}),
  });
  endOfTurn();
}

function answerControl(message) {
  const request = message.request ?? {};
  const ok = (response = {}) => write({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response } });
  const fail = (error, code) =>
    write({ type: "control_response", response: { subtype: "error", request_id: message.request_id, error, ...(code ? { error_code: code } : {}) } });
  switch (request.subtype) {
    case "initialize":
      ok({
        commands: [],
        agents: [],
        output_style: "default",
        available_output_styles: ["default"],
        models: [],
        account: {},
        pid: process.pid,
        current_permission_mode: permissionMode,
        pending_permission_requests: [],
      });
      return;
    case "interrupt":
      ok({ still_queued: [] });
      interruptTurn();
      void pump();
      return;
    case "set_permission_mode": {
      const modes = ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"];
      if (!modes.includes(request.mode)) return fail(`Invalid permission mode: ${String(request.mode)}`, "invalid_mode");
      if (request.mode === "bypassPermissions" && !allowBypass && permissionMode !== "bypassPermissions") {
        return fail("Cannot set permission mode to bypassPermissions: the session was not launched with it", "bypass_not_launched");
      }
      permissionMode = request.mode;
      ok({ mode: permissionMode });
      write({ type: "system", subtype: "status", status: null, permissionMode, session_id: sessionId, uuid: randomUUID() });
      return;
    }
    case "set_model":
      ok({ model: typeof request.model === "string" && request.model !== "default" ? request.model : "replay" });
      return;
    case "set_max_thinking_tokens":
    case "set_has_subscribers":
    case "apply_flag_settings":
    case "seed_read_state":
    case "stop_task":
      ok();
      return;
    case "rename_session":
      ok();
      write({ type: "system", subtype: "session_title_changed", title: String(request.title ?? ""), session_id: sessionId, uuid: randomUUID() });
      return;
    case "cancel_async_message": {
      const at = credits.indexOf(request.message_uuid);
      if (at >= 0) credits.splice(at, 1);
      ok(at >= 0 ? { cancelled: true, message_uuid: request.message_uuid } : { cancelled: false });
      return;
    }
    case "mcp_status":
      ok({ mcpServers: [] });
      return;
    case "get_context_usage":
      ok({ categories: [], totalTokens: 0, maxTokens: 200000, rawMaxTokens: 200000, percentage: 0, model: "replay" });
      return;
    default:
      fail(`Unsupported control request subtype: ${String(request.subtype)}`, "unsupported_request");
  }
}

function onAnswer(response) {
  if (!waitingFor || response?.request_id !== waitingFor.id) return;
  const { subtype, request_id: _id, ...rest } = response;
  void _id;
  answers.set(waitingFor.recordedId, { subtype, request_id: waitingFor.id, ...rest });
  waitingFor = undefined;
  void pump();
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((block) => (block && typeof block.text === "string" ? block.text : "")).join("");
}

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    // the real CLI dies on a line that is not JSON (protocol reference §10.2)
    process.stderr.write(`Error parsing streaming input line (type=unknown, ${line.length} chars): SyntaxError\n`);
    process.exit(1);
  }
  if (message.type === "control_request") answerControl(message);
  else if (message.type === "control_response") onAnswer(message.response);
  else if (message.type === "user") {
    if (!recording) {
      const named = option("--replay-file", undefined) ?? /\[replay:([^\]\s]+)\]/.exec(textOf(message.message?.content))?.[1];
      if (named) {
        try {
          loadRecording(named);
        } catch (err) {
          process.stderr.write(`replay-cli: cannot load ${named}: ${err instanceof Error ? err.message : String(err)}\n`);
        }
      }
      if (!recording) {
        plainTurn(message.uuid, "replay-cli: name a recording with [replay:<file name>] in the first prompt");
        return;
      }
    }
    credits.push(message.uuid);
    void pump();
  }
});
lines.on("close", () => {
  // like the real CLI: the lines being written go out, then the process exits (a request left
  // unanswered cannot be answered any more)
  const done = setInterval(() => {
    if (!pumping) {
      clearInterval(done);
      process.exit(0);
    }
  }, 20);
});
