import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  EncodeError,
  encodeControlError,
  encodeControlRequest,
  encodeControlSuccess,
  encodePermissionDecision,
  encodeUserMessage,
  type HostControlRequest,
  type PermissionDecision,
  type UserMessageInput,
  ZHostControlRequest,
} from "./encode";

const dir = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** Every JSON line the capture driver wrote to the CLI's stdin, over all fixtures. */
const stdinMessages: Array<Record<string, unknown>> = readdirSync(dir)
  .filter((f) => f.endsWith(".ndjson"))
  .flatMap((f) => readFileSync(`${dir}${f}`, "utf8").split("\n"))
  .filter((l) => l.length > 0)
  .map((l) => JSON.parse(l) as { dir: string; msg?: Record<string, unknown> })
  .filter((row) => row.dir === "in" && row.msg !== undefined)
  .map((row) => row.msg as Record<string, unknown>);

const UUID = "151e7b1e-9018-4f0b-b40d-5d44df2aac5b";

/** The line's invariants: one `\n` at the end, nothing else that splits, one JSON object. */
function parseLine(line: string): Record<string, unknown> {
  expect(line.endsWith("\n")).toBe(true);
  const body = line.slice(0, -1);
  expect(body).not.toMatch(/[\n\r\u2028\u2029]/);
  const value = JSON.parse(body) as unknown;
  expect(typeof value === "object" && value !== null && !Array.isArray(value)).toBe(true);
  return value as Record<string, unknown>;
}

function expectEncodeError(fn: () => unknown): EncodeError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(EncodeError);
    expect((err as EncodeError).code).toBe("invalid_payload");
    return err as EncodeError;
  }
  throw new Error("expected an EncodeError");
}

describe("encodeUserMessage", () => {
  it("round-trips every user message of the transcripts", () => {
    const users = stdinMessages.filter((m) => m.type === "user");
    expect(users.length).toBeGreaterThan(20);
    for (const msg of users) {
      const message = msg.message as { content: UserMessageInput["content"] };
      const input: UserMessageInput = {
        uuid: typeof msg.uuid === "string" ? msg.uuid : UUID,
        content: message.content,
      };
      if (msg.priority !== undefined) input.priority = msg.priority as "now";
      if (msg.shouldQuery !== undefined) input.shouldQuery = msg.shouldQuery as boolean;
      expect(parseLine(encodeUserMessage(input))).toEqual({ ...msg, uuid: input.uuid });
    }
    expect(users.some((m) => m.priority === "now")).toBe(true);
    expect(users.some((m) => m.shouldQuery === false)).toBe(true);
  });

  it("writes plain-string content and keeps newlines escaped", () => {
    const text = "line one\nline two\r\n\u2028tab\there \u{1F389}";
    const line = encodeUserMessage({ uuid: UUID, content: text });
    expect(line.split("\n")).toHaveLength(2);
    expect(parseLine(line)).toEqual({
      type: "user",
      message: { role: "user", content: text },
      parent_tool_use_id: null,
      session_id: "",
      uuid: UUID,
    });
  });

  const malformed: Array<[string, unknown]> = [
    ["no uuid", { content: "hi" }],
    ["uuid not a uuid", { uuid: "abc", content: "hi" }],
    ["no content", { uuid: UUID }],
    ["blank string content", { uuid: UUID, content: "  \n " }],
    ["empty block list", { uuid: UUID, content: [] }],
    ["blank text block", { uuid: UUID, content: [{ type: "text", text: "" }] }],
    ["unknown block type", { uuid: UUID, content: [{ type: "tool_result", tool_use_id: "x" }] }],
    ["extra block field", { uuid: UUID, content: [{ type: "text", text: "hi", role: "assistant" }] }],
    [
      "image without data",
      { uuid: UUID, content: [{ type: "image", source: { type: "base64", media_type: "image/png" } }] },
    ],
    ["bad priority", { uuid: UUID, content: "hi", priority: "urgent" }],
    ["non-boolean shouldQuery", { uuid: UUID, content: "hi", shouldQuery: "no" }],
    ["a role override attempt", { uuid: UUID, content: "hi", role: "assistant" }],
    ["a type override attempt", { uuid: UUID, content: "hi", type: "control_request" }],
    ["content that is a number", { uuid: UUID, content: 5 }],
    ["not an object", "hello"],
    ["null", null],
  ];
  it.each(malformed)("rejects %s", (_name, input) => {
    expectEncodeError(() => encodeUserMessage(input as UserMessageInput));
  });
});

describe("encodeControlRequest", () => {
  const supported = new Set<string>(ZHostControlRequest.options.map((o) => o.shape.subtype.value));

  it("round-trips every supported control request of the transcripts and refuses the rest", () => {
    const requests = stdinMessages.filter((m) => m.type === "control_request");
    let roundTripped = 0;
    for (const msg of requests) {
      const request = msg.request as HostControlRequest;
      if (supported.has(request.subtype) && !(request.subtype === "set_permission_mode" && !("mode" in request))) {
        expect(parseLine(encodeControlRequest(msg.request_id as string, request))).toEqual(msg);
        roundTripped++;
      } else {
        // set_color, read_file, a set_permission_mode without mode, a made-up subtype…
        expectEncodeError(() => encodeControlRequest(msg.request_id as string, request));
      }
    }
    expect(roundTripped).toBeGreaterThanOrEqual(20);
    const seen = new Set(requests.map((m) => (m.request as { subtype: string }).subtype));
    expect([...supported].filter((s) => !seen.has(s))).toEqual([]);
  });

  const malformed: Array<[string, string, unknown]> = [
    ["empty id", "", { subtype: "interrupt" }],
    ["no request", "host_1", undefined],
    ["request without subtype", "host_1", {}],
    ["unknown subtype", "host_1", { subtype: "totally_unknown_subtype" }],
    ["invalid mode", "host_1", { subtype: "set_permission_mode", mode: "yolo" }],
    ["missing mode", "host_1", { subtype: "set_permission_mode" }],
    ["empty model", "host_1", { subtype: "set_model", model: "" }],
    ["negative thinking budget", "host_1", { subtype: "set_max_thinking_tokens", max_thinking_tokens: -1 }],
    ["missing thinking budget", "host_1", { subtype: "set_max_thinking_tokens" }],
    ["bad context detail", "host_1", { subtype: "get_context_usage", detail: "all" }],
    ["rewind without message id", "host_1", { subtype: "rewind_files", dry_run: true }],
    ["blank session title", "host_1", { subtype: "rename_session", title: " " }],
    ["extra field", "host_1", { subtype: "interrupt", now: true }],
    [
      "hook matcher without callbacks",
      "host_1",
      { subtype: "initialize", hooks: { PreToolUse: [{ matcher: "Bash" }] } },
    ],
    ["lower-case hook event", "host_1", { subtype: "initialize", hooks: { pretooluse: [{ hookCallbackIds: ["a"] }] } }],
  ];
  it.each(malformed)("rejects %s", (_name, id, request) => {
    expectEncodeError(() => encodeControlRequest(id, request as HostControlRequest));
  });
});

describe("control responses", () => {
  it("round-trip the transcripts' answers and refuse the deliberately malformed one", () => {
    const responses = stdinMessages.filter((m) => m.type === "control_response");
    const kinds = new Set<string>();
    for (const msg of responses) {
      const response = msg.response as {
        subtype: string;
        request_id: string;
        response?: Record<string, unknown>;
        error?: string;
        error_code?: string;
      };
      const payload = response.response ?? {};
      if (response.subtype === "error") {
        kinds.add("error");
        expect(parseLine(encodeControlError(response.request_id, response.error ?? "", response.error_code))).toEqual(
          msg,
        );
      } else if (payload.behavior === "allow" || payload.behavior === "deny") {
        kinds.add(payload.behavior);
        if (payload.behavior === "allow" && payload.updatedPermissions) kinds.add("updatedPermissions");
        if (payload.behavior === "deny" && payload.interrupt) kinds.add("interrupt");
        const line = encodePermissionDecision(response.request_id, payload as PermissionDecision);
        expect(parseLine(line)).toEqual(msg);
      } else if (payload.behavior !== undefined) {
        kinds.add("malformed");
        expectEncodeError(() => encodePermissionDecision(response.request_id, payload as PermissionDecision));
      } else {
        kinds.add("mcp_response" in payload ? "mcp" : "hook");
        expect(parseLine(encodeControlSuccess(response.request_id, payload))).toEqual(msg);
      }
    }
    expect([...kinds].sort()).toEqual(["allow", "deny", "hook", "interrupt", "mcp", "updatedPermissions"]);
  });

  it("writes allow and deny in the documented shapes", () => {
    expect(parseLine(encodePermissionDecision("r1", { behavior: "allow", updatedInput: { command: "ls" } }))).toEqual({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: "r1",
        response: { behavior: "allow", updatedInput: { command: "ls" } },
      },
    });
    expect(
      parseLine(encodePermissionDecision("r1", { behavior: "deny", message: "Approval expired", interrupt: false })),
    ).toEqual({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: "r1",
        response: { behavior: "deny", message: "Approval expired", interrupt: false },
      },
    });
    expect(parseLine(encodeControlError("r2", "no", "unsupported_request"))).toEqual({
      type: "control_response",
      response: { subtype: "error", request_id: "r2", error: "no", error_code: "unsupported_request" },
    });
    expect(parseLine(encodeControlSuccess("r3"))).toEqual({
      type: "control_response",
      response: { subtype: "success", request_id: "r3", response: {} },
    });
  });

  it("keeps a multi-line edit on one line", () => {
    const content = "a\nb\r\nc\u2028d\u2029e";
    const line = encodePermissionDecision("r1", { behavior: "allow", updatedInput: { file_path: "/w/x", content } });
    expect(parseLine(line)).toMatchObject({ response: { response: { updatedInput: { content } } } });
  });

  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  const malformedDecisions: Array<[string, unknown]> = [
    ["no behavior", { updatedInput: {} }],
    ["behavior maybe", { behavior: "maybe" }],
    ["allow without updatedInput", { behavior: "allow" }],
    ["allow with array input", { behavior: "allow", updatedInput: ["ls"] }],
    ["allow with string input", { behavior: "allow", updatedInput: "ls" }],
    ["allow with a function inside", { behavior: "allow", updatedInput: { f: () => 1 } }],
    ["allow with NaN inside", { behavior: "allow", updatedInput: { n: Number.NaN } }],
    ["allow with undefined inside", { behavior: "allow", updatedInput: { u: undefined } }],
    ["allow with a cycle", { behavior: "allow", updatedInput: cyclic }],
    ["allow with a message", { behavior: "allow", updatedInput: {}, message: "x" }],
    [
      "allow with a bad permission update",
      { behavior: "allow", updatedInput: {}, updatedPermissions: [{ type: "addRules" }] },
    ],
    [
      "allow with a bad destination",
      {
        behavior: "allow",
        updatedInput: {},
        updatedPermissions: [{ type: "setMode", mode: "acceptEdits", destination: "everywhere" }],
      },
    ],
    ["deny without message", { behavior: "deny" }],
    ["deny with blank message", { behavior: "deny", message: "   " }],
    ["deny with non-boolean interrupt", { behavior: "deny", message: "no", interrupt: "yes" }],
    ["deny with updatedInput", { behavior: "deny", message: "no", updatedInput: {} }],
    ["null", null],
  ];
  it.each(malformedDecisions)("rejects a decision with %s", (_name, decision) => {
    expectEncodeError(() => encodePermissionDecision("r1", decision as PermissionDecision));
  });

  it("rejects bad ids, payloads and error texts", () => {
    expectEncodeError(() => encodePermissionDecision("", { behavior: "deny", message: "no" }));
    expectEncodeError(() => encodeControlSuccess("r1", [] as unknown as Record<string, unknown>));
    expectEncodeError(() => encodeControlSuccess("r1", { big: BigInt(1) }));
    expectEncodeError(() => encodeControlError("r1", ""));
    expectEncodeError(() => encodeControlError("r1", "x", ""));
  });
});
