import type {
  CliMessage,
  CommandLifecycleState,
  ControlRequestMessage,
  JsonObject,
  UnknownMessage,
  UnknownReason,
} from "./messages";

/** Why a stdout line could not be decoded. */
export const DecodeErrorCode = {
  /** `JSON.parse` failed (a CLI that died mid-line, stray output). */
  invalidJson: "invalid_json",
  /** Valid JSON, but an array, number, string or null. */
  notAnObject: "not_an_object",
  /** An object without a string `type`. */
  missingType: "missing_type",
  /** A known `type` whose fields the decoder relies on are missing or of the wrong kind. */
  invalidShape: "invalid_shape",
} as const;

/** One of {@link DecodeErrorCode}. */
export type DecodeErrorCode = (typeof DecodeErrorCode)[keyof typeof DecodeErrorCode];

/**
 * A stdout line that could not be decoded. Returned as a value, never thrown: one bad line
 * must not end the stream (the next line is usually fine).
 */
export class LineDecodeError extends Error {
  /** What went wrong. */
  readonly code: DecodeErrorCode;
  /** The parsed value, when the line was valid JSON. */
  readonly value: unknown;

  /** Builds the error; `value` is the parsed JSON when there was any. */
  constructor(code: DecodeErrorCode, message: string, value?: unknown) {
    super(message);
    this.name = "LineDecodeError";
    this.code = code;
    this.value = value;
  }
}

/**
 * The outcome of decoding one stdout line. `raw` is the line exactly as framed (no trailing
 * newline), kept so that later layers persist what the CLI printed rather than a re-encoding.
 */
export type DecodedLine =
  | { ok: true; raw: string; message: CliMessage }
  | { ok: false; raw: string; error: LineDecodeError };

/**
 * Decodes one stdout line of the CLI into a typed {@link CliMessage}.
 *
 * Cost model: one `JSON.parse` plus a `type`/`subtype` switch and `typeof` checks of the few
 * fields later layers rely on (this runs on every line, including multi-megabyte tool results,
 * so there is no schema validation of whole objects). Known messages are the parsed object
 * itself; unknown types and subtypes become {@link UnknownMessage}; nothing throws.
 */
export function decodeLine(raw: string): DecodedLine {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, raw, error: new LineDecodeError("invalid_json", `Invalid JSON: ${detail}`) };
  }
  if (!isObject(value)) {
    const kind = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const error = new LineDecodeError("not_an_object", `Expected a JSON object, got ${kind}`, value);
    return { ok: false, raw, error };
  }
  const outcome = classify(value);
  if (typeof outcome === "string") {
    return { ok: false, raw, error: new LineDecodeError(outcomeCode(value), outcome, value) };
  }
  return { ok: true, raw, message: outcome };
}

function outcomeCode(value: JsonObject): DecodeErrorCode {
  return typeof value.type === "string" ? "invalid_shape" : "missing_type";
}

/** Returns the typed message, or a problem description. */
function classify(obj: JsonObject): CliMessage | string {
  const type = obj.type;
  if (typeof type !== "string") return "Object has no string `type`";
  switch (type) {
    case "stream_event":
      return isObject(obj.event) && typeof obj.event.type === "string"
        ? (obj as unknown as CliMessage)
        : "stream_event.event is not an object with a `type`";
    case "assistant":
      return isObject(obj.message) && Array.isArray(obj.message.content)
        ? (obj as unknown as CliMessage)
        : "assistant.message.content is not an array";
    case "user":
      return isObject(obj.message) && (Array.isArray(obj.message.content) || typeof obj.message.content === "string")
        ? (obj as unknown as CliMessage)
        : "user.message.content is neither an array nor a string";
    case "system":
      return classifySystem(obj);
    case "result":
      if (typeof obj.subtype !== "string") return "result.subtype is not a string";
      if (typeof obj.is_error !== "boolean") return "result.is_error is not a boolean";
      return obj as unknown as CliMessage;
    case "control_request":
      return classifyControlRequest(obj);
    case "control_response": {
      const response = obj.response;
      if (!isObject(response)) return "control_response.response is not an object";
      if (response.request_id !== undefined && typeof response.request_id !== "string") {
        return "control_response.response.request_id is not a string";
      }
      if (response.subtype === "success") {
        return response.response === undefined || isObject(response.response)
          ? (obj as unknown as CliMessage)
          : "control_response success payload is not an object";
      }
      if (response.subtype === "error") {
        return typeof response.error === "string"
          ? (obj as unknown as CliMessage)
          : "control_response.response.error is not a string";
      }
      return "control_response.response.subtype is neither success nor error";
    }
    case "control_cancel_request":
      return typeof obj.request_id === "string"
        ? (obj as unknown as CliMessage)
        : "control_cancel_request.request_id is not a string";
    case "command_lifecycle":
      if (typeof obj.command_uuid !== "string") return "command_lifecycle.command_uuid is not a string";
      if (typeof obj.state !== "string") return "command_lifecycle.state is not a string";
      return LIFECYCLE_STATES.has(obj.state) ? (obj as unknown as CliMessage) : unknown(obj, "state", type, obj.state);
    case "conversation_reset":
      return typeof obj.new_conversation_id === "string"
        ? (obj as unknown as CliMessage)
        : "conversation_reset.new_conversation_id is not a string";
    case "keep_alive":
      return obj as unknown as CliMessage;
    default:
      return unknown(obj, "type", type, typeof obj.subtype === "string" ? obj.subtype : undefined);
  }
}

const LIFECYCLE_STATES: ReadonlySet<string> = new Set<CommandLifecycleState>([
  "queued",
  "started",
  "completed",
  "cancelled",
]);

function classifySystem(obj: JsonObject): CliMessage | string {
  const subtype = obj.subtype;
  if (typeof subtype !== "string") return "system.subtype is not a string";
  let problem: string | undefined;
  switch (subtype) {
    case "init":
      problem = requireString(obj, "session_id") ?? requireString(obj, "model") ?? requireString(obj, "permissionMode");
      break;
    case "status":
      problem =
        obj.status === null || typeof obj.status === "string" ? undefined : "status is neither a string nor null";
      break;
    case "compact_boundary":
      problem = isObject(obj.compact_metadata) ? undefined : "compact_metadata is not an object";
      break;
    case "api_retry":
      problem = typeof obj.attempt === "number" ? undefined : "attempt is not a number";
      break;
    case "permission_denied":
      problem = requireString(obj, "tool_name");
      break;
    case "informational":
      problem = requireString(obj, "content");
      break;
    case "hook_started":
    case "hook_response":
    case "hook_progress":
      problem = requireString(obj, "hook_id");
      break;
    case "task_started":
    case "task_progress":
    case "task_updated":
    case "task_notification":
      problem = requireString(obj, "task_id");
      break;
    case "background_tasks_changed":
      problem = Array.isArray(obj.tasks) ? undefined : "tasks is not an array";
      break;
    case "session_state_changed":
      problem = requireString(obj, "state");
      break;
    case "session_title_changed":
      problem = requireString(obj, "title");
      break;
    case "thinking_tokens":
      problem = typeof obj.estimated_tokens === "number" ? undefined : "estimated_tokens is not a number";
      break;
    default:
      return unknown(obj, "subtype", "system", subtype);
  }
  return problem === undefined ? (obj as unknown as CliMessage) : `system/${subtype}: ${problem}`;
}

/**
 * A CLI → host request with a `request_id` always decodes to a control request, because the
 * CLI waits for its answer: anything the decoder cannot vouch for becomes an `unknown` body,
 * which the control channel answers with an error instead of leaving the turn hanging.
 */
function classifyControlRequest(obj: JsonObject): CliMessage | string {
  const requestId = obj.request_id;
  if (typeof requestId !== "string") return "control_request.request_id is not a string";
  const request = obj.request;
  if (!isObject(request)) {
    return unknownRequest(requestId, {}, "", "control_request.request is not an object");
  }
  const subtype = request.subtype;
  if (typeof subtype !== "string") {
    return unknownRequest(requestId, request, "", "request.subtype is not a string");
  }
  let problem: string | undefined;
  switch (subtype) {
    case "can_use_tool":
      problem = requireString(request, "tool_name") ?? (isObject(request.input) ? undefined : "input is not an object");
      break;
    case "hook_callback":
      problem =
        requireString(request, "callback_id") ?? (isObject(request.input) ? undefined : "input is not an object");
      break;
    case "mcp_message":
      problem =
        requireString(request, "server_name") ?? (isObject(request.message) ? undefined : "message is not an object");
      break;
    case "elicitation":
      problem = requireString(request, "mcp_server_name") ?? requireString(request, "message");
      break;
    case "request_user_dialog":
      problem = requireString(request, "dialog_kind");
      break;
    default:
      return unknownRequest(requestId, request, subtype, undefined);
  }
  if (problem !== undefined) return unknownRequest(requestId, request, subtype, problem);
  return obj as unknown as CliMessage;
}

function unknownRequest(
  requestId: string,
  value: JsonObject,
  originalSubtype: string,
  problem: string | undefined,
): ControlRequestMessage {
  const request =
    problem === undefined
      ? { subtype: "unknown" as const, originalSubtype, value }
      : { subtype: "unknown" as const, originalSubtype, value, problem };
  return { type: "control_request", request_id: requestId, request };
}

function unknown(
  value: JsonObject,
  reason: UnknownReason,
  originalType: string,
  originalSubtype: string | undefined,
): UnknownMessage {
  return originalSubtype === undefined
    ? { type: "unknown", reason, originalType, value }
    : { type: "unknown", reason, originalType, originalSubtype, value };
}

function requireString(obj: JsonObject, key: string): string | undefined {
  return typeof obj[key] === "string" ? undefined : `${key} is not a string`;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
