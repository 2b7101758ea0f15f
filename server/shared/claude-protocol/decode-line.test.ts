import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { decodeLine, LineDecodeError } from "./decode-line";
import { LineFramer } from "./line-framer";
import type { CliMessage } from "./messages";

const dir = fileURLToPath(new URL("./fixtures/", import.meta.url));
const fixtureNames = readdirSync(dir)
  .filter((f) => f.endsWith(".ndjson"))
  .map((f) => f.slice(0, -".ndjson".length));

function stdoutLines(name: string): string[] {
  return readFileSync(`${dir}${name}.ndjson`, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { dir: string; msg?: unknown })
    .filter((row) => row.dir === "out" && row.msg !== undefined)
    .map((row) => JSON.stringify(row.msg));
}

/** A coverage key: type, plus subtype for system/result/control frames. */
function keyOf(message: CliMessage): string {
  switch (message.type) {
    case "system":
    case "result":
      return `${message.type}/${message.subtype}`;
    case "control_request":
      return `control_request/${message.request.subtype}`;
    case "control_response":
      return `control_response/${message.response.subtype}`;
    case "unknown":
      return `unknown(${message.reason})`;
    default:
      return message.type;
  }
}

function decodeFixture(name: string): CliMessage[] {
  const framer = new LineFramer();
  const bytes = new TextEncoder().encode(`${stdoutLines(name).join("\n")}\n`);
  const messages: CliMessage[] = [];
  // Feed in pipe-sized chunks, as the sidecar will.
  for (let i = 0; i < bytes.length; i += 4096) {
    for (const line of framer.push(bytes.subarray(i, i + 4096))) {
      if (typeof line !== "string") throw line;
      const decoded = decodeLine(line);
      if (!decoded.ok) throw new Error(`${name}: ${decoded.error.message}: ${line.slice(0, 200)}`);
      expect(decoded.raw).toBe(line);
      messages.push(decoded.message);
    }
  }
  expect(framer.end()).toEqual([]);
  return messages;
}

describe("decodeLine over the captured fixtures", () => {
  const captured = fixtureNames.filter((n) => !n.startsWith("synthetic"));

  it.each(captured)("%s: every stdout line decodes to a known message", (name) => {
    const messages = decodeFixture(name);
    expect(messages.length).toBeGreaterThan(0);
    const unknown = messages.map(keyOf).filter((k) => k.includes("unknown"));
    expect(unknown).toEqual([]);
  });

  it("covers every message type and subtype of the reference", () => {
    const seen = new Set<string>();
    for (const name of fixtureNames) for (const m of decodeFixture(name)) seen.add(keyOf(m));
    const expected = [
      "system/init",
      "system/status",
      "system/compact_boundary",
      "system/api_retry",
      "system/permission_denied",
      "system/informational",
      "system/hook_started",
      "system/hook_response",
      "system/hook_progress",
      "system/task_started",
      "system/task_progress",
      "system/task_updated",
      "system/task_notification",
      "system/background_tasks_changed",
      "system/session_state_changed",
      "system/session_title_changed",
      "system/thinking_tokens",
      "conversation_reset",
      "assistant",
      "user",
      "result/success",
      "result/error_during_execution",
      "result/error_max_turns",
      "result/error_max_budget_usd",
      "stream_event",
      "control_request/can_use_tool",
      "control_request/hook_callback",
      "control_request/mcp_message",
      "control_request/elicitation",
      "control_request/request_user_dialog",
      "control_request/unknown",
      "control_response/success",
      "control_response/error",
      "control_cancel_request",
      "command_lifecycle",
      "keep_alive",
      "unknown(type)",
      "unknown(subtype)",
      "unknown(state)",
    ];
    expect([...seen].filter((k) => !expected.includes(k))).toEqual([]);
    expect(expected.filter((k) => !seen.has(k))).toEqual([]);
  });

  it("keeps the fields later layers read", () => {
    const messages = decodeFixture("subagent");
    const toolResult = messages.find((m) => m.type === "user" && m.tool_result_meta !== undefined);
    expect(toolResult).toMatchObject({
      type: "user",
      tool_use_result: expect.anything(),
      tool_result_meta: [{ permission_decision: { decision: "accept" } }],
    });
    const subagentPrompt = messages.find((m) => m.type === "control_request");
    expect(subagentPrompt).toMatchObject({
      request: { subtype: "can_use_tool", tool_name: "Bash", agent_id: expect.any(String) },
    });
    const results = messages.filter((m) => m.type === "result");
    expect(results.map((r) => r.type === "result" && r.is_error)).toEqual([false, false]);

    const coalesced = decodeFixture("queue-while-running").filter((m) => m.type === "result");
    expect(coalesced[1]).toMatchObject({ user_message_uuids: [expect.any(String), expect.any(String)] });

    const apiError = decodeFixture("api-500-exhausted").find((m) => m.type === "result" && m.is_error);
    expect(apiError).toMatchObject({ subtype: "success", is_error: true, terminal_reason: "api_error" });
  });

  it("decodes the synthetic unknowns to the raw fallback, with the object untouched", () => {
    const messages = decodeFixture("synthetic-unknown");
    expect(messages[0]).toMatchObject({
      type: "unknown",
      reason: "type",
      originalType: "tool_progress",
      value: { type: "tool_progress", tool_name: "Bash" },
    });
    expect(messages[2]).toMatchObject({
      type: "unknown",
      reason: "subtype",
      originalType: "system",
      originalSubtype: "files_persisted",
    });
    expect(messages[3]).toMatchObject({ type: "unknown", reason: "state", originalSubtype: "paused" });
    expect(messages[4]).toEqual({ type: "keep_alive" });
    expect(messages[8]).toMatchObject({
      type: "control_request",
      request_id: "00000000-0000-4000-8000-0000000000b3",
      request: { subtype: "unknown", originalSubtype: "mcp_call", value: { server_name: "srv" } },
    });
    expect(messages[9]).toMatchObject({
      type: "control_request",
      request: { subtype: "unknown", originalSubtype: "can_use_tool", problem: "input is not an object" },
    });
  });
});

describe("decodeLine errors are values", () => {
  const cases: Array<[string, string, string]> = [
    ["truncated JSON (CLI died mid-line)", '{"type":"assistant","mess', "invalid_json"],
    ["plain text", "Error: something on stdout", "invalid_json"],
    ["two objects on a line", '{"type":"keep_alive"}{"type":"keep_alive"}', "invalid_json"],
    ["array", "[1,2]", "not_an_object"],
    ["number", "42", "not_an_object"],
    ["null", "null", "not_an_object"],
    ["string", '"hello"', "not_an_object"],
    ["no type", '{"subtype":"init"}', "missing_type"],
    ["numeric type", '{"type":7}', "missing_type"],
    ["system without subtype", '{"type":"system"}', "invalid_shape"],
    [
      "init without session id",
      '{"type":"system","subtype":"init","model":"m","permissionMode":"default"}',
      "invalid_shape",
    ],
    ["result without is_error", '{"type":"result","subtype":"success"}', "invalid_shape"],
    ["assistant without content", '{"type":"assistant","message":{}}', "invalid_shape"],
    ["user with numeric content", '{"type":"user","message":{"content":5}}', "invalid_shape"],
    ["stream_event without event", '{"type":"stream_event"}', "invalid_shape"],
    ["control_request without id", '{"type":"control_request","request":{"subtype":"can_use_tool"}}', "invalid_shape"],
    [
      "control_response with odd subtype",
      '{"type":"control_response","response":{"subtype":"maybe"}}',
      "invalid_shape",
    ],
    [
      "control_response error without text",
      '{"type":"control_response","response":{"subtype":"error"}}',
      "invalid_shape",
    ],
    ["cancel without id", '{"type":"control_cancel_request"}', "invalid_shape"],
    ["lifecycle without uuid", '{"type":"command_lifecycle","state":"queued"}', "invalid_shape"],
    ["reset without new id", '{"type":"conversation_reset"}', "invalid_shape"],
  ];

  it.each(cases)("%s", (_name, line, code) => {
    const decoded = decodeLine(line);
    expect(decoded.ok).toBe(false);
    if (decoded.ok) return;
    expect(decoded.raw).toBe(line);
    expect(decoded.error).toBeInstanceOf(LineDecodeError);
    expect(decoded.error.code).toBe(code);
  });

  it("answers a control_request whose body is missing as an unknown request, so it can be refused", () => {
    const decoded = decodeLine('{"type":"control_request","request_id":"r1"}');
    expect(decoded).toMatchObject({
      ok: true,
      message: { type: "control_request", request_id: "r1", request: { subtype: "unknown", originalSubtype: "" } },
    });
  });
});
