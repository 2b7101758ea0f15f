#!/usr/bin/env node
// A fault-injecting stand-in for the `claude` CLI, speaking just enough stream-json to be driven
// by the session runner. Plain JavaScript so that it starts in tens of milliseconds (no loader).
//
//   node test/fake-cli/fake-cli.mjs --fake-mode <mode> [--fake-lines N] [--fake-huge-bytes N] [claude flags…]
//
// Modes:
//   behave          answer every user message with init / assistant / result; control requests succeed
//   hang            read stdin, never answer anything, ignore stdin end (SIGTERM still ends it)
//   garbage         per user message: a non-JSON line and a huge non-JSON line, then a normal turn
//   ignore-sigterm  behave, but ignore SIGTERM and stdin end (only SIGKILL ends it)
//   grandchild      start `sleep 300` in the same process group (pid on stderr), then behave
//   setsid-grandchild  start `sleep 313` in a session and process group of its own (it escapes a
//                   group kill; only a PID namespace or a cgroup takes it down), then behave
//   crash-after     behave, but exit 1 once N stdout lines were printed (N = 0: right after start)
//   permission      per user message: a can_use_tool request; after the answer, the tool result and a result
//   hog             per user message `hog N`: allocate and touch N MB (8 MB at a time, kept), then
//                   answer (under a smaller cgroup memory cap the kernel kills it on the way; chaos A15)
//   flood           per user message: N assistant lines of --fake-flood-bytes (default 60000) characters
//                   each, N the number in the message (`flood 300`), then a result
//   stream          per user message `stream N M [D]`: after D ms (default 0), N stream_event text deltas M ms apart, each carrying
//                   `bench_t_us` (CLOCK_MONOTONIC µs, one clock machine-wide) when printed, then a
//                   result; any other message behaves (bench/cluster.ts measures relay with it)
//
// The claude flags are ignored except --session-id / --resume (the session id it reports); the argv
// is printed on stderr as `fake-cli argv: …` so tests can check what was passed. The environment is
// inherited by the grandchild, so the leak check (CONDUIT_LEAK_TAG) sees both.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const index = argv.indexOf(name);
  return index === -1 ? fallback : argv[index + 1];
};
const mode = option("--fake-mode", "behave");
const crashAfterLines = Number(option("--fake-lines", "0"));
const hugeBytes = Number(option("--fake-huge-bytes", String(2 * 1024 * 1024)));
const floodBytes = Number(option("--fake-flood-bytes", "60000"));
const sessionId = option("--session-id", undefined) ?? option("--resume", undefined) ?? randomUUID();
let permissionMode = option("--permission-mode", "default");

process.stderr.write(`fake-cli argv: ${argv.join(" ")}\n`);

let printed = 0;
function print(message) {
  process.stdout.write(`${typeof message === "string" ? message : JSON.stringify(message)}\n`);
  printed++;
  if (mode === "crash-after" && printed >= crashAfterLines) process.exit(1);
}

if (mode === "crash-after" && crashAfterLines === 0) setTimeout(() => process.exit(1), 20);

if (mode === "ignore-sigterm") process.on("SIGTERM", () => process.stderr.write("fake-cli: ignoring SIGTERM\n"));

if (mode === "setsid-grandchild") {
  const runaway = spawn("sleep", ["313"], { stdio: "ignore", detached: true });
  runaway.unref();
  process.stderr.write(`fake-cli setsid grandchild ${runaway.pid}\n`);
}

if (mode === "grandchild") {
  const grandchild = spawn("sleep", ["300"], { stdio: "ignore" });
  process.stderr.write(`fake-cli grandchild ${grandchild.pid}\n`);
}

// Stays alive after stdin ends in the modes that must be killed.
const keepAlive = mode === "hang" || mode === "ignore-sigterm" ? setInterval(() => undefined, 60_000) : undefined;

/** The `system/init` line that starts each turn. */
function printInit(tools) {
  print({
    type: "system",
    subtype: "init",
    session_id: sessionId,
    model: "fake-model",
    permissionMode,
    cwd: process.cwd(),
    tools,
  });
}

function turn(uuid, text) {
  printInit([]);
  print({
    type: "assistant",
    message: {
      id: `msg_${randomUUID()}`,
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: `You said: ${text}` }],
    },
    parent_tool_use_id: null,
    session_id: sessionId,
    uuid: randomUUID(),
  });
  finish(uuid, `You said: ${text}`);
}

function finish(uuid, text) {
  print({
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

const pendingTools = new Map();

function askPermission(uuid, text) {
  printInit(["Bash"]);
  const requestId = randomUUID();
  const toolUseId = `toolu_${randomUUID()}`;
  pendingTools.set(requestId, { uuid, toolUseId });
  print({
    type: "control_request",
    request_id: requestId,
    request: { subtype: "can_use_tool", tool_name: "Bash", input: { command: text }, tool_use_id: toolUseId },
  });
}

function onPermissionAnswer(response) {
  const pending = pendingTools.get(response.request_id);
  if (!pending) return;
  pendingTools.delete(response.request_id);
  const decision = response.response ?? {};
  const content =
    response.subtype === "success" && decision.behavior === "allow"
      ? `ran: ${decision.updatedInput?.command}`
      : (decision.message ?? response.error ?? "denied");
  print({
    type: "user",
    message: {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: pending.toolUseId, content, is_error: decision.behavior !== "allow" },
      ],
    },
    parent_tool_use_id: null,
    session_id: sessionId,
  });
  finish(pending.uuid, content);
}

function answerControl(message) {
  const request = message.request ?? {};
  let response = {};
  if (request.subtype === "interrupt") response = { still_queued: [] };
  if (request.subtype === "set_permission_mode") {
    permissionMode = request.mode;
    response = { mode: request.mode };
  }
  if (request.subtype === "set_model") response = { model: request.model ?? "fake-model" };
  print({ type: "control_response", response: { subtype: "success", request_id: message.request_id, response } });
}

/** What `hog` mode holds on to. */
const hogged = [];

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (line.trim() === "") return;
  const message = JSON.parse(line);
  if (mode === "hang") return;
  if (message.type === "control_request") answerControl(message);
  else if (message.type === "control_response") onPermissionAnswer(message.response);
  else if (message.type === "user") {
    const content = message.message.content;
    const text = typeof content === "string" ? content : content.map((block) => block.text ?? "").join("");
    if (mode === "garbage") {
      print("this line is not JSON at all");
      print(`{"type":"assistant","junk":"${"x".repeat(hugeBytes)}"}`);
    }
    if (mode === "flood") {
      printInit([]);
      const lines = Number(/flood (\d+)/.exec(text)?.[1] ?? "1");
      const filler = "f".repeat(floodBytes);
      for (let i = 0; i < lines; i++) {
        print({
          type: "assistant",
          message: { id: `msg_${randomUUID()}`, type: "message", role: "assistant", content: [{ type: "text", text: `${i} ${filler}` }] },
          parent_tool_use_id: null,
          session_id: sessionId,
          uuid: randomUUID(),
        });
      }
      finish(message.uuid, `flooded ${lines}`);
      return;
    }
    if (mode === "hog") {
      const megabytes = Number(/hog (\d+)/.exec(text)?.[1] ?? "0");
      for (let mb = 0; mb < megabytes; mb += 8) hogged.push(Buffer.alloc(8 * 1024 * 1024, 1));
    }
    const stream = mode === "stream" ? /stream (\d+) (\d+)(?: (\d+))?/.exec(text) : null;
    if (stream) {
      printInit([]);
      const total = Number(stream[1]);
      let sent = 0;
      const run = () => {
        const tick = setInterval(() => {
          print({
            type: "stream_event",
            event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: `${sent} ` } },
            parent_tool_use_id: null,
            session_id: sessionId,
            uuid: randomUUID(),
            bench_t_us: Number(process.hrtime.bigint() / 1000n),
          });
          sent += 1;
          if (sent >= total) {
            clearInterval(tick);
            finish(message.uuid, `streamed ${total}`);
          }
        }, Number(stream[2]));
      };
      if (stream[3] === undefined) run();
      else setTimeout(run, Number(stream[3]));
      return;
    }
    if (mode === "permission") askPermission(message.uuid, text);
    else turn(message.uuid, text);
  }
});
lines.on("close", () => {
  if (keepAlive === undefined) process.exit(0);
});
