import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  type CanUseToolHandler,
  ControlCancelledError,
  ControlChannel,
  ControlChannelClosedError,
  type ControlChannelEvent,
  type ControlChannelOptions,
  ControlRequestError,
  ControlTimeoutError,
} from "./control-channel";
import { decodeLine } from "./decode-line";
import { EncodeError, type PermissionDecision } from "./encode";
import type { CliMessage } from "./messages";

const timers = {
  setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms),
  clearTimeout: (handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function decode(value: unknown): CliMessage {
  const decoded = decodeLine(JSON.stringify(value));
  if (!decoded.ok) throw decoded.error;
  return decoded.message;
}

/** A channel wired to an in-memory stdin, like the tests of the ACP SDK wire client and server. */
function setup(overrides: Partial<ControlChannelOptions> = {}) {
  const written: Array<Record<string, unknown>> = [];
  const events: ControlChannelEvent[] = [];
  const channel = new ControlChannel({
    write: (line) => {
      expect(line.endsWith("\n")).toBe(true);
      written.push(JSON.parse(line) as Record<string, unknown>);
    },
    timers,
    requestTimeoutMs: 1000,
    onCanUseTool: () => ({ behavior: "deny", message: "no handler in this test" }),
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { channel, written, events };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("host → CLI requests", () => {
  it("matches replies by id and resolves with the payload", async () => {
    const { channel, written } = setup();
    const first = channel.request({ subtype: "set_permission_mode", mode: "acceptEdits" });
    const second = channel.request({ subtype: "interrupt" });
    expect(written).toEqual([
      {
        type: "control_request",
        request_id: "host_1",
        request: { subtype: "set_permission_mode", mode: "acceptEdits" },
      },
      { type: "control_request", request_id: "host_2", request: { subtype: "interrupt" } },
    ]);
    // Answers out of order.
    channel.receive(
      decode({
        type: "control_response",
        response: { subtype: "success", request_id: "host_2", response: { still_queued: [] } },
      }),
    );
    channel.receive(decode({ type: "control_response", response: { subtype: "success", request_id: "host_1" } }));
    await expect(second).resolves.toEqual({ still_queued: [] });
    await expect(first).resolves.toEqual({});
    expect(channel.pendingRequestCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("turns an error reply into a ControlRequestError with the CLI's error_code", async () => {
    const { channel } = setup();
    const pending = channel.request({ subtype: "set_permission_mode", mode: "bypassPermissions" });
    channel.receive(
      decode({
        type: "control_response",
        response: {
          subtype: "error",
          request_id: "host_1",
          error:
            "Cannot set permission mode to bypassPermissions because the session was not launched with --dangerously-skip-permissions",
          error_code: "bypass_not_launched",
        },
      }),
    );
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlRequestError);
    expect(error).toMatchObject({
      subtype: "set_permission_mode",
      requestId: "host_1",
      errorCode: "bypass_not_launched",
      code: "cli_error",
    });
  });

  it("times out a request, then ignores its late answer", async () => {
    const { channel, events } = setup();
    const pending = channel.request({ subtype: "get_context_usage" }, { timeoutMs: 5000 });
    const outcome = pending.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(4999);
    expect(channel.pendingRequestCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error).toBeInstanceOf(ControlTimeoutError);
    expect(error).toMatchObject({ subtype: "get_context_usage", timeoutMs: 5000 });
    channel.receive(
      decode({ type: "control_response", response: { subtype: "success", request_id: "host_1", response: {} } }),
    );
    expect(events).toEqual([{ kind: "unmatched-response", requestId: "host_1" }]);
  });

  it("uses the default timeout", async () => {
    const { channel } = setup();
    const outcome = channel.request({ subtype: "mcp_status" }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await outcome).toBeInstanceOf(ControlTimeoutError);
  });

  it("rejects everything pending on rejectAll, and clears the timers", async () => {
    const { channel } = setup();
    const a = channel.request({ subtype: "interrupt" }).catch((e: unknown) => e);
    const b = channel.request({ subtype: "get_settings" }).catch((e: unknown) => e);
    expect(vi.getTimerCount()).toBe(2);
    channel.rejectAll("process exited with code 1");
    for (const error of [await a, await b]) {
      expect(error).toBeInstanceOf(ControlChannelClosedError);
      expect(error).toMatchObject({ reason: "process exited with code 1" });
    }
    expect(vi.getTimerCount()).toBe(0);
    expect(channel.pendingRequestCount).toBe(0);
  });

  it("refuses an invalid request without writing anything", async () => {
    const { channel, written } = setup();
    const error = await channel
      .request({ subtype: "set_permission_mode", mode: "yolo" } as unknown as { subtype: "interrupt" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EncodeError);
    expect(written).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects with a typed error when stdin is gone", async () => {
    const { channel } = setup({
      write: () => {
        throw new Error("EPIPE");
      },
    });
    const error = await channel.request({ subtype: "interrupt" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ControlChannelClosedError);
    expect(channel.pendingRequestCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("settles a reply written synchronously by write() (registered before the write)", async () => {
    const ref: { channel?: ControlChannel } = {};
    const { channel } = setup({
      write: (line) => {
        const { request_id } = JSON.parse(line) as { request_id: string };
        ref.channel?.receive(
          decode({ type: "control_response", response: { subtype: "success", request_id, response: { ok: 1 } } }),
        );
      },
    });
    ref.channel = channel;
    await expect(channel.request({ subtype: "get_binary_version" })).resolves.toEqual({ ok: 1 });
  });

  it("close() rejects, clears timers, and refuses later use", async () => {
    const { channel, written } = setup();
    const pending = channel.request({ subtype: "interrupt" }).catch((e: unknown) => e);
    channel.close();
    expect(await pending).toBeInstanceOf(ControlChannelClosedError);
    expect(vi.getTimerCount()).toBe(0);
    await expect(channel.request({ subtype: "interrupt" })).rejects.toBeInstanceOf(ControlChannelClosedError);
    expect(written).toHaveLength(1);
    channel.close();
  });
});

const canUseTool = (requestId: string, input: Record<string, unknown> = { command: "echo hi" }) =>
  decode({
    type: "control_request",
    request_id: requestId,
    request: { subtype: "can_use_tool", tool_name: "Bash", display_name: "Bash", input, tool_use_id: "toolu_1" },
  });

describe("CLI → host requests", () => {
  it("routes can_use_tool to the one handler and writes its allow", async () => {
    const seen: string[] = [];
    const handler: CanUseToolHandler = async (request, context) => {
      seen.push(`${request.tool_name}:${context.requestId}`);
      return {
        behavior: "allow",
        updatedInput: { ...request.input, command: "echo HOST-MODIFIED" },
        updatedPermissions: [
          {
            type: "addRules",
            rules: [{ toolName: "Bash", ruleContent: "echo *" }],
            behavior: "allow",
            destination: "session",
          },
        ],
      };
    };
    const { channel, written } = setup({ onCanUseTool: handler });
    expect(channel.receive(canUseTool("req-1"))).toBe(true);
    await flush();
    expect(seen).toEqual(["Bash:req-1"]);
    expect(written).toEqual([
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: "req-1",
          response: {
            behavior: "allow",
            updatedInput: { command: "echo HOST-MODIFIED" },
            updatedPermissions: [
              {
                type: "addRules",
                rules: [{ toolName: "Bash", ruleContent: "echo *" }],
                behavior: "allow",
                destination: "session",
              },
            ],
          },
        },
      },
    ]);
    expect(channel.pendingHandlerCount).toBe(0);
  });

  it("writes a deny with interrupt", async () => {
    const { channel, written } = setup({
      onCanUseTool: () => ({ behavior: "deny", message: "Not now", interrupt: true }),
    });
    channel.receive(canUseTool("req-2"));
    await flush();
    expect(written[0]).toEqual({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: "req-2",
        response: { behavior: "deny", message: "Not now", interrupt: true },
      },
    });
  });

  it("honours control_cancel_request: the handler is told, a later answer is not written", async () => {
    let decide: (d: PermissionDecision) => void = () => {};
    let signal: AbortSignal | undefined;
    const { channel, written, events } = setup({
      onCanUseTool: (_request, context) => {
        signal = context.signal;
        return new Promise<PermissionDecision>((resolve) => {
          decide = resolve;
        });
      },
    });
    channel.receive(canUseTool("req-3"));
    await flush();
    expect(signal?.aborted).toBe(false);
    expect(channel.receive(decode({ type: "control_cancel_request", request_id: "req-3" }))).toBe(true);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(ControlCancelledError);
    decide({ behavior: "allow", updatedInput: {} });
    await flush();
    expect(written).toEqual([]);
    expect(events).toEqual([
      { kind: "cancelled", requestId: "req-3", subtype: "can_use_tool" },
      { kind: "late-answer-dropped", requestId: "req-3", subtype: "can_use_tool" },
    ]);
  });

  it("answers with an error when the handler fails or returns an unencodable decision", async () => {
    const { channel, written, events } = setup({
      onCanUseTool: (request) => {
        if (request.tool_use_id === "toolu_1") throw new Error("database down");
        return { behavior: "deny", message: "" };
      },
    });
    channel.receive(canUseTool("req-4"));
    channel.receive(
      decode({
        type: "control_request",
        request_id: "req-5",
        request: { subtype: "can_use_tool", tool_name: "Edit", input: {} },
      }),
    );
    await flush();
    expect(written).toEqual([
      {
        type: "control_response",
        response: { subtype: "error", request_id: "req-4", error: "Conduit could not answer can_use_tool" },
      },
      {
        type: "control_response",
        response: { subtype: "error", request_id: "req-5", error: "Conduit produced an invalid can_use_tool answer" },
      },
    ]);
    expect(events.map((e) => e.kind)).toEqual(["handler-failed", "handler-failed"]);
  });

  it("answers hook_callback with {continue:true} by default, or with the owner's hook output", async () => {
    const hook = decode({
      type: "control_request",
      request_id: "hook-1",
      request: {
        subtype: "hook_callback",
        callback_id: "cb_pre_bash",
        input: { hook_event_name: "PreToolUse" },
        tool_use_id: "t",
      },
    });
    const plain = setup();
    plain.channel.receive(hook);
    await flush();
    expect(plain.written).toEqual([
      {
        type: "control_response",
        response: { subtype: "success", request_id: "hook-1", response: { continue: true } },
      },
    ]);

    const custom = setup({
      onHookCallback: (request) => ({
        hookSpecificOutput: {
          hookEventName: request.input.hook_event_name,
          permissionDecision: "deny",
          permissionDecisionReason: "policy",
        },
      }),
    });
    custom.channel.receive(hook);
    await flush();
    expect(custom.written[0]).toMatchObject({
      response: { response: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } } },
    });
  });

  it("answers mcp_message requests with a JSON-RPC error and notifications with the SDK's empty result", async () => {
    const { channel, written } = setup();
    channel.receive(
      decode({
        type: "control_request",
        request_id: "mcp-1",
        request: {
          subtype: "mcp_message",
          server_name: "hostsrv",
          message: { method: "initialize", params: {}, jsonrpc: "2.0", id: 0 },
        },
      }),
    );
    channel.receive(
      decode({
        type: "control_request",
        request_id: "mcp-2",
        request: {
          subtype: "mcp_message",
          server_name: "hostsrv",
          message: { method: "notifications/initialized", jsonrpc: "2.0" },
        },
      }),
    );
    await flush();
    expect(written).toEqual([
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: "mcp-1",
          response: {
            mcp_response: {
              jsonrpc: "2.0",
              id: 0,
              error: { code: -32601, message: "Conduit has no in-process MCP server named hostsrv" },
            },
          },
        },
      },
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: "mcp-2",
          response: { mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } },
        },
      },
    ]);
  });

  it("declines elicitations and refuses dialogs, unknown and malformed requests with an error", async () => {
    const { channel, written, events } = setup();
    channel.receive(
      decode({
        type: "control_request",
        request_id: "e1",
        request: { subtype: "elicitation", mcp_server_name: "srv", message: "Which?" },
      }),
    );
    channel.receive(
      decode({
        type: "control_request",
        request_id: "d1",
        request: { subtype: "request_user_dialog", dialog_kind: "confirm" },
      }),
    );
    channel.receive(
      decode({ type: "control_request", request_id: "u1", request: { subtype: "mcp_call", server_name: "srv" } }),
    );
    channel.receive(
      decode({ type: "control_request", request_id: "u2", request: { subtype: "can_use_tool", tool_name: "Bash" } }),
    );
    await flush();
    expect(written).toEqual([
      { type: "control_response", response: { subtype: "success", request_id: "e1", response: { action: "decline" } } },
      {
        type: "control_response",
        response: {
          subtype: "error",
          request_id: "d1",
          error: "Conduit does not support dialog kind confirm",
          error_code: "unsupported_request",
        },
      },
      {
        type: "control_response",
        response: {
          subtype: "error",
          request_id: "u1",
          error: "Unsupported control request subtype: mcp_call",
          error_code: "unsupported_request",
        },
      },
      {
        type: "control_response",
        response: {
          subtype: "error",
          request_id: "u2",
          error: "Malformed can_use_tool control request: input is not an object",
          error_code: "unsupported_request",
        },
      },
    ]);
    expect(events.map((e) => e.kind)).toEqual(["unsupported-request", "unsupported-request", "unsupported-request"]);
  });

  it("aborts pending handlers on rejectAll and writes nothing after", async () => {
    let signal: AbortSignal | undefined;
    let decide: (d: PermissionDecision) => void = () => {};
    const { channel, written } = setup({
      onCanUseTool: (_request, context) => {
        signal = context.signal;
        return new Promise<PermissionDecision>((resolve) => {
          decide = resolve;
        });
      },
    });
    channel.receive(canUseTool("req-6"));
    channel.rejectAll("process exited");
    expect(signal?.reason).toBeInstanceOf(ControlChannelClosedError);
    decide({ behavior: "deny", message: "too late" });
    await flush();
    expect(written).toEqual([]);
  });

  it("ignores a duplicate request id while the first is pending, and non-control messages", async () => {
    const { channel, events } = setup({ onCanUseTool: () => new Promise<PermissionDecision>(() => {}) });
    channel.receive(canUseTool("req-7"));
    channel.receive(canUseTool("req-7"));
    expect(events).toEqual([{ kind: "duplicate-request", requestId: "req-7" }]);
    expect(channel.receive(decode({ type: "keep_alive" }))).toBe(false);
    channel.close();
    expect(channel.pendingHandlerCount).toBe(0);
  });

  it("drives a can_use_tool round trip from a captured transcript line", async () => {
    const line =
      '{"type":"control_request","request_id":"3a2d3757-990d-4376-997d-e9a987a6bdf7","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","display_name":"AskUserQuestion","input":{"questions":[{"question":"Which colour should the button be?","header":"Colour","options":[{"label":"Red","description":"A red button"},{"label":"Blue","description":"A blue button"}],"multiSelect":false}]},"tool_use_id":"toolu_0200_1mfnzf","requires_user_interaction":true}}';
    const { channel, written } = setup({
      onCanUseTool: (request) => ({
        behavior: "allow",
        updatedInput: { ...request.input, answers: { "Which colour should the button be?": "Blue" } },
      }),
    });
    const decoded = decodeLine(line);
    if (!decoded.ok) throw decoded.error;
    channel.receive(decoded.message);
    await flush();
    // What the capture driver sent for this prompt (ask-user-question transcript).
    expect(written).toEqual([
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: "3a2d3757-990d-4376-997d-e9a987a6bdf7",
          response: {
            behavior: "allow",
            updatedInput: {
              questions: [
                {
                  question: "Which colour should the button be?",
                  header: "Colour",
                  options: [
                    { label: "Red", description: "A red button" },
                    { label: "Blue", description: "A blue button" },
                  ],
                  multiSelect: false,
                },
              ],
              answers: { "Which colour should the button be?": "Blue" },
            },
          },
        },
      },
    ]);
  });
});
