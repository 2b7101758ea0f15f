import { AppError, ErrorCode } from "../errors/app-error";
import {
  EncodeError,
  encodeControlError,
  encodeControlRequest,
  encodeControlSuccess,
  encodePermissionDecision,
  type HostControlRequest,
  type HostControlSubtype,
  type PermissionDecision,
} from "./encode";
import type {
  CanUseToolRequest,
  CliMessage,
  ControlRequestMessage,
  ControlResponseMessage,
  HookCallbackRequest,
  JsonObject,
  McpMessageRequest,
} from "./messages";

/** Timer functions, injected so that tests use fake timers and `close()` can prove it left none. */
export interface ControlTimers {
  /** Schedules `callback` after `ms` milliseconds; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, ms: number): unknown;
  /** Cancels a handle returned by `setTimeout`. */
  clearTimeout(handle: unknown): void;
}

/** Context handed to every CLI → host request handler. */
export interface ControlHandlerContext {
  /** The CLI's request id. */
  requestId: string;
  /**
   * Aborted when the CLI cancels the request (`control_cancel_request`, e.g. after an
   * interrupt) or the channel is closed. An answer given after that is not written.
   */
  signal: AbortSignal;
}

/** Decides a `can_use_tool` request. May take as long as it likes; the CLI waits. */
export type CanUseToolHandler = (
  request: CanUseToolRequest,
  context: ControlHandlerContext,
) => PermissionDecision | Promise<PermissionDecision>;

/** Answers a `hook_callback` with hook output JSON (e.g. `{ continue: true }`). */
export type HookCallbackHandler = (
  request: HookCallbackRequest,
  context: ControlHandlerContext,
) => JsonObject | Promise<JsonObject>;

/** Answers an `mcp_message` with a JSON-RPC response object (sent as `mcp_response`). */
export type McpMessageHandler = (
  request: McpMessageRequest,
  context: ControlHandlerContext,
) => JsonObject | Promise<JsonObject>;

/** Things worth a log line that are not failures of any caller. */
export type ControlChannelEvent =
  | { kind: "unmatched-response"; requestId: string | undefined }
  | { kind: "cancelled"; requestId: string; subtype: string }
  | { kind: "late-answer-dropped"; requestId: string; subtype: string }
  | { kind: "handler-failed"; requestId: string; subtype: string; error: unknown }
  | { kind: "unsupported-request"; requestId: string; subtype: string; problem?: string }
  | { kind: "duplicate-request"; requestId: string }
  | { kind: "write-failed"; requestId: string; error: unknown };

/** Options of {@link ControlChannel}. */
export interface ControlChannelOptions {
  /** Writes one complete stdin line (already `\n`-terminated). May throw if stdin is gone. */
  write: (line: string) => void;
  /** Timer functions. */
  timers: ControlTimers;
  /** Default time a host → CLI request may take. Default 30 s. */
  requestTimeoutMs?: number;
  /** The one decider of `can_use_tool` requests. */
  onCanUseTool: CanUseToolHandler;
  /** Optional; without it every hook callback is answered `{ continue: true }`. */
  onHookCallback?: HookCallbackHandler;
  /** Optional; without it requests get a JSON-RPC "method not found" error, notifications an empty result. */
  onMcpMessage?: McpMessageHandler;
  /** Diagnostics sink. */
  onEvent?: (event: ControlChannelEvent) => void;
}

/** Default {@link ControlChannelOptions.requestTimeoutMs}. */
export const DEFAULT_CONTROL_TIMEOUT_MS = 30_000;

/** The CLI answered a host request with `subtype: "error"`. */
export class ControlRequestError extends AppError {
  /** The request's subtype. */
  readonly subtype: string;
  /** The host request id. */
  readonly requestId: string;
  /** The CLI's `error_code` (e.g. `unsupported_request`, `invalid_mode`, `bypass_not_launched`). */
  readonly errorCode: string | undefined;

  /** Builds the error from the CLI's answer. */
  constructor(subtype: string, requestId: string, error: string, errorCode: string | undefined) {
    super(ErrorCode.cliError, `The CLI refused ${subtype}: ${error}`, { errorCode });
    this.name = "ControlRequestError";
    this.subtype = subtype;
    this.requestId = requestId;
    this.errorCode = errorCode;
  }
}

/** A host request got no answer in time. Its late answer, if any, is ignored. */
export class ControlTimeoutError extends AppError {
  /** The request's subtype. */
  readonly subtype: string;
  /** The host request id. */
  readonly requestId: string;
  /** The limit that passed. */
  readonly timeoutMs: number;

  /** Builds the error for a request that waited `timeoutMs`. */
  constructor(subtype: string, requestId: string, timeoutMs: number) {
    super(ErrorCode.unavailable, `The CLI did not answer ${subtype} within ${timeoutMs} ms`);
    this.name = "ControlTimeoutError";
    this.subtype = subtype;
    this.requestId = requestId;
    this.timeoutMs = timeoutMs;
  }
}

/** The channel was closed or the CLI exited while a request was pending. */
export class ControlChannelClosedError extends AppError {
  /** Why (e.g. "process exited with code 1"). */
  readonly reason: string;

  /** Builds the error with the owner's reason. */
  constructor(reason: string) {
    super(ErrorCode.unavailable, `The CLI control channel is closed: ${reason}`);
    this.name = "ControlChannelClosedError";
    this.reason = reason;
  }
}

/** The CLI withdrew one of its requests (`control_cancel_request`); the abort reason handlers see. */
export class ControlCancelledError extends AppError {
  /** The CLI's request id. */
  readonly requestId: string;

  /** Builds the error for the withdrawn request. */
  constructor(requestId: string) {
    super(ErrorCode.conflict, `The CLI withdrew request ${requestId}`);
    this.name = "ControlCancelledError";
    this.requestId = requestId;
  }
}

/** Per-call options of {@link ControlChannel.request}. */
export interface ControlRequestOptions {
  /** Overrides the default timeout (e.g. `initialize` with slow MCP servers). */
  timeoutMs?: number;
}

interface OutboundEntry {
  subtype: string;
  resolve: (payload: JsonObject) => void;
  reject: (error: Error) => void;
  timer: unknown;
}

interface InboundEntry {
  subtype: string;
  controller: AbortController;
}

/**
 * The control protocol over one CLI child: host → CLI requests matched to their answers by id,
 * and CLI → host requests routed to their handler and always answered.
 *
 * Invariants:
 * - every host request settles exactly once: answer, error answer, timeout, or close;
 * - every CLI request is answered exactly once, unless the CLI cancelled it or the channel
 *   closed (the CLI waits forever for `can_use_tool`, so "no handler" is never an option);
 * - after `close()` no timer is left and nothing more is written.
 */
export class ControlChannel {
  private readonly options: ControlChannelOptions;
  private readonly timeoutMs: number;
  private readonly outbound = new Map<string, OutboundEntry>();
  private readonly inbound = new Map<string, InboundEntry>();
  private nextId = 1;
  private closedReason: string | undefined;

  /** Creates a channel; nothing is written until `request` or `receive` is called. */
  constructor(options: ControlChannelOptions) {
    this.options = options;
    this.timeoutMs = options.requestTimeoutMs ?? DEFAULT_CONTROL_TIMEOUT_MS;
  }

  /** Host requests waiting for an answer. */
  get pendingRequestCount(): number {
    return this.outbound.size;
  }

  /** CLI requests waiting for their handler. */
  get pendingHandlerCount(): number {
    return this.inbound.size;
  }

  /**
   * Sends a host → CLI control request and resolves with the success payload (`{}` when the
   * CLI sent none). Rejects with {@link ControlRequestError}, {@link ControlTimeoutError},
   * {@link ControlChannelClosedError} (also when the write fails), or {@link EncodeError}
   * (then nothing was written).
   */
  request(body: HostControlRequest, options: ControlRequestOptions = {}): Promise<JsonObject> {
    if (this.closedReason !== undefined) {
      return Promise.reject(new ControlChannelClosedError(this.closedReason));
    }
    const requestId = `host_${this.nextId++}`;
    let line: string;
    try {
      line = encodeControlRequest(requestId, body);
    } catch (err) {
      return Promise.reject(err);
    }
    const subtype: HostControlSubtype = body.subtype;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    return new Promise<JsonObject>((resolve, reject) => {
      // Register before writing, or an answer that arrives synchronously is lost.
      const timer = this.options.timers.setTimeout(() => {
        if (this.outbound.delete(requestId)) {
          reject(new ControlTimeoutError(subtype, requestId, timeoutMs));
        }
      }, timeoutMs);
      this.outbound.set(requestId, { subtype, resolve, reject, timer });
      try {
        this.options.write(line);
      } catch (err) {
        this.outbound.delete(requestId);
        this.options.timers.clearTimeout(timer);
        const detail = err instanceof Error ? err.message : String(err);
        reject(new ControlChannelClosedError(`writing to stdin failed: ${detail}`));
      }
    });
  }

  /**
   * Feeds a decoded stdout message. Returns true when it was a control message (consumed
   * here), false for everything else.
   */
  receive(message: CliMessage): boolean {
    switch (message.type) {
      case "control_response":
        if (this.closedReason === undefined) this.settle(message);
        return true;
      case "control_request":
        if (this.closedReason === undefined) this.dispatch(message);
        return true;
      case "control_cancel_request":
        if (this.closedReason === undefined) this.cancel(message.request_id);
        return true;
      default:
        return false;
    }
  }

  /**
   * Rejects every pending host request with {@link ControlChannelClosedError} and aborts every
   * pending CLI request handler (its answer would have nowhere to go). Call when the process
   * exits. The channel stays usable; `close()` also refuses further use.
   */
  rejectAll(reason: string): void {
    const error = new ControlChannelClosedError(reason);
    const outbound = [...this.outbound.values()];
    this.outbound.clear();
    for (const entry of outbound) {
      this.options.timers.clearTimeout(entry.timer);
      entry.reject(error);
    }
    const inbound = [...this.inbound.values()];
    this.inbound.clear();
    for (const entry of inbound) entry.controller.abort(error);
  }

  /** Rejects everything pending, clears every timer, and ignores all later input. Idempotent. */
  close(reason = "closed"): void {
    if (this.closedReason !== undefined) return;
    this.rejectAll(reason);
    this.closedReason = reason;
  }

  private settle(message: ControlResponseMessage): void {
    const { response } = message;
    const requestId = response.request_id;
    const entry = requestId === undefined ? undefined : this.outbound.get(requestId);
    if (requestId === undefined || entry === undefined) {
      // Echoes (--replay-user-messages) and answers after a timeout land here.
      this.emit({ kind: "unmatched-response", requestId });
      return;
    }
    this.outbound.delete(requestId);
    this.options.timers.clearTimeout(entry.timer);
    if (response.subtype === "success") {
      entry.resolve(response.response ?? {});
    } else {
      entry.reject(new ControlRequestError(entry.subtype, requestId, response.error, response.error_code));
    }
  }

  private dispatch(message: ControlRequestMessage): void {
    const requestId = message.request_id;
    const request = message.request;
    if (this.inbound.has(requestId)) {
      this.emit({ kind: "duplicate-request", requestId });
      return;
    }
    switch (request.subtype) {
      case "can_use_tool":
        this.run(
          requestId,
          request.subtype,
          (context) => this.options.onCanUseTool(request, context),
          (decision) => encodePermissionDecision(requestId, decision),
        );
        return;
      case "hook_callback": {
        const handler = this.options.onHookCallback;
        this.run(
          requestId,
          request.subtype,
          (context) => (handler ? handler(request, context) : { continue: true }),
          (output) => encodeControlSuccess(requestId, output),
        );
        return;
      }
      case "mcp_message": {
        const handler = this.options.onMcpMessage;
        this.run(
          requestId,
          request.subtype,
          (context) => (handler ? handler(request, context) : defaultMcpResponse(request)),
          (mcpResponse) => encodeControlSuccess(requestId, { mcp_response: mcpResponse }),
        );
        return;
      }
      case "elicitation":
        // Conduit shows no MCP elicitation UI; declining is the MCP answer for "the user said no".
        this.answer(requestId, encodeControlSuccess(requestId, { action: "decline" }));
        return;
      case "request_user_dialog":
        this.emit({ kind: "unsupported-request", requestId, subtype: request.subtype });
        this.answer(
          requestId,
          encodeControlError(
            requestId,
            `Conduit does not support dialog kind ${request.dialog_kind}`,
            "unsupported_request",
          ),
        );
        return;
      case "unknown": {
        const subtype = request.originalSubtype || "(none)";
        this.emit(
          request.problem === undefined
            ? { kind: "unsupported-request", requestId, subtype }
            : { kind: "unsupported-request", requestId, subtype, problem: request.problem },
        );
        const text =
          request.problem === undefined
            ? `Unsupported control request subtype: ${subtype}`
            : `Malformed ${subtype} control request: ${request.problem}`;
        this.answer(requestId, encodeControlError(requestId, text, "unsupported_request"));
        return;
      }
    }
  }

  /**
   * Runs a handler and writes its encoded answer, unless the request was cancelled or the
   * channel closed meanwhile. A failing handler or an unencodable answer becomes an error
   * answer, so the CLI is never left waiting.
   */
  private run<T>(
    requestId: string,
    subtype: string,
    handler: (context: ControlHandlerContext) => T | Promise<T>,
    encode: (result: T) => string,
  ): void {
    const controller = new AbortController();
    const entry: InboundEntry = { subtype, controller };
    this.inbound.set(requestId, entry);
    const isCurrent = () => this.inbound.get(requestId) === entry;
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(handler({ requestId, signal: controller.signal }));
    } catch (err) {
      pending = Promise.reject(err);
    }
    pending.then(
      (result) => {
        if (!isCurrent()) {
          this.emit({ kind: "late-answer-dropped", requestId, subtype });
          return;
        }
        this.inbound.delete(requestId);
        let line: string;
        try {
          line = encode(result);
        } catch (err) {
          this.emit({ kind: "handler-failed", requestId, subtype, error: err });
          line = encodeControlError(requestId, `Conduit produced an invalid ${subtype} answer`);
        }
        this.answer(requestId, line);
      },
      (err: unknown) => {
        if (!isCurrent()) {
          this.emit({ kind: "late-answer-dropped", requestId, subtype });
          return;
        }
        this.inbound.delete(requestId);
        this.emit({ kind: "handler-failed", requestId, subtype, error: err });
        const text =
          err instanceof AppError && !(err instanceof EncodeError)
            ? err.message
            : `Conduit could not answer ${subtype}`;
        this.answer(requestId, encodeControlError(requestId, text));
      },
    );
  }

  private cancel(requestId: string): void {
    const entry = this.inbound.get(requestId);
    if (entry === undefined) return;
    this.inbound.delete(requestId);
    this.emit({ kind: "cancelled", requestId, subtype: entry.subtype });
    entry.controller.abort(new ControlCancelledError(requestId));
  }

  private answer(requestId: string, line: string): void {
    if (this.closedReason !== undefined) return;
    try {
      this.options.write(line);
    } catch (err) {
      this.emit({ kind: "write-failed", requestId, error: err });
    }
  }

  private emit(event: ControlChannelEvent): void {
    this.options.onEvent?.(event);
  }
}

/**
 * What the official SDK answers when no in-process MCP server handles a message: notifications
 * get an empty result (the SDK's own shape), requests a JSON-RPC "method not found" error.
 */
function defaultMcpResponse(request: McpMessageRequest): JsonObject {
  const { message } = request;
  const id = message.id;
  const isRequest = typeof message.method === "string" && (typeof id === "string" || typeof id === "number");
  if (!isRequest) return { jsonrpc: "2.0", result: {}, id: 0 };
  return {
    jsonrpc: "2.0",
    id,
    error: { code: -32601, message: `Conduit has no in-process MCP server named ${request.server_name}` },
  };
}
