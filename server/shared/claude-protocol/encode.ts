import { z } from "zod";
import { AppError, ErrorCode } from "../errors/app-error";

/**
 * The only way Conduit builds a line for the CLI's stdin.
 *
 * One malformed stdin line terminates the CLI (invalid JSON, two objects on a line, a `user`
 * without `message` or with another role, a `control_request` without `request`). So every
 * function here validates its input with zod, builds the wire object itself (role, `type`,
 * envelope), serializes it with `JSON.stringify` (which escapes every newline inside strings)
 * and returns exactly one `\n`-terminated line. Invalid input throws {@link EncodeError};
 * nothing is returned, so nothing can be written.
 */

/** Input that cannot become a stdin line. Nothing was produced. */
export class EncodeError extends AppError {
  /** One entry per problem, `path: message`. */
  readonly issues: readonly string[];

  /** Builds the error for `what` (e.g. "user message") with its problems. */
  constructor(what: string, issues: readonly string[]) {
    super(ErrorCode.invalidPayload, `Cannot encode ${what}: ${issues.join("; ")}`, issues);
    this.name = "EncodeError";
    this.issues = issues;
  }
}

const nonBlank = (s: string) => s.trim().length > 0;

/** A JSON object of any content (checked to be JSON-serializable). */
export const ZJsonObject = z.record(z.string(), z.json());

/** The six permission modes. */
export const ZPermissionMode = z.enum(["default", "acceptEdits", "plan", "dontAsk", "auto", "bypassPermissions"]);

/** A control request id: any non-empty string (Conduit uses `host_<n>`, the CLI uses UUIDs). */
export const ZRequestId = z.string().min(1).max(256);

// ---------------------------------------------------------------------------------------------
// User messages

/** A text block the user sends. The Messages API rejects blank text blocks, so they are refused here. */
export const ZUserTextBlock = z.strictObject({
  type: z.literal("text"),
  text: z.string().refine(nonBlank, "text must not be blank"),
});

/** An image block the user sends. */
export const ZUserImageBlock = z.strictObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("base64"),
      media_type: z.enum(["image/png", "image/jpeg", "image/gif", "image/webp"]),
      data: z.string().min(1),
    }),
    z.strictObject({ type: z.literal("url"), url: z.url() }),
  ]),
});

/** A content block of a user message. */
export const ZUserContentBlock = z.discriminatedUnion("type", [ZUserTextBlock, ZUserImageBlock]);

/** A content block of a user message. */
export type UserContentBlock = z.infer<typeof ZUserContentBlock>;

/** What Conduit sends as a prompt. */
export const ZUserMessageInput = z.strictObject({
  /**
   * Client-made id: turns on `command_lifecycle` frames and `user_message_uuids` on results,
   * and is the key of `rewind_files` and `cancel_async_message`.
   */
  uuid: z.uuid(),
  /** Plain text or content blocks; both are accepted by the CLI. */
  content: z.union([z.string().refine(nonBlank, "content must not be blank"), z.array(ZUserContentBlock).min(1)]),
  /** `now` preempts the running turn; `next`/`later` order the queue. */
  priority: z.enum(["now", "next", "later"]).optional(),
  /** `false`: append to history without a model call (a `num_turns: 0` result still follows). */
  shouldQuery: z.boolean().optional(),
  /** Answer inside a subagent's thread (rare); null/absent for the main thread. */
  parentToolUseId: z.string().min(1).nullable().optional(),
});

/** What Conduit sends as a prompt. */
export type UserMessageInput = z.infer<typeof ZUserMessageInput>;

/**
 * Encodes a user message. The role is always `"user"` and `message` always present: the two
 * mistakes that kill the CLI cannot be expressed through this input.
 */
export function encodeUserMessage(input: UserMessageInput): string {
  const data = parse(ZUserMessageInput, input, "user message");
  const line: Record<string, unknown> = {
    type: "user",
    message: { role: "user", content: data.content },
    parent_tool_use_id: data.parentToolUseId ?? null,
    session_id: "",
    uuid: data.uuid,
  };
  if (data.priority !== undefined) line.priority = data.priority;
  if (data.shouldQuery !== undefined) line.shouldQuery = data.shouldQuery;
  return serialize(line, "user message");
}

// ---------------------------------------------------------------------------------------------
// Host → CLI control requests

const ZHookMatcher = z.strictObject({
  matcher: z.string().optional(),
  hookCallbackIds: z.array(z.string().min(1)).min(1),
  timeout: z.number().int().positive().optional(),
});

/** Host → CLI control requests Conduit may send (`request` objects, keyed by `subtype`). */
export const ZHostControlRequest = z.discriminatedUnion("subtype", [
  z.strictObject({
    subtype: z.literal("initialize"),
    hooks: z.record(z.string().regex(/^[A-Z][A-Za-z]*$/), z.array(ZHookMatcher)).optional(),
    systemPrompt: z.string().optional(),
    appendSystemPrompt: z.string().optional(),
    sdkMcpServers: z.array(z.string().min(1)).optional(),
    agents: z.record(z.string(), ZJsonObject).optional(),
    jsonSchema: ZJsonObject.optional(),
    title: z.string().optional(),
    supportedDialogKinds: z.array(z.string().min(1)).optional(),
  }),
  z.strictObject({ subtype: z.literal("interrupt"), cancel_queued: z.boolean().optional() }),
  z.strictObject({ subtype: z.literal("set_permission_mode"), mode: ZPermissionMode }),
  /** `model` omitted selects the default model. */
  z.strictObject({ subtype: z.literal("set_model"), model: z.string().min(1).optional() }),
  z.strictObject({
    subtype: z.literal("set_max_thinking_tokens"),
    max_thinking_tokens: z.number().int().nonnegative().nullable(),
  }),
  z.strictObject({
    subtype: z.literal("get_context_usage"),
    detail: z.enum(["summary", "full"]).optional(),
  }),
  z.strictObject({
    subtype: z.literal("rewind_files"),
    user_message_id: z.string().min(1),
    dry_run: z.boolean().optional(),
  }),
  z.strictObject({ subtype: z.literal("cancel_async_message"), message_uuid: z.string().min(1) }),
  z.strictObject({ subtype: z.literal("rename_session"), title: z.string().refine(nonBlank) }),
  z.strictObject({ subtype: z.literal("stop_task"), task_id: z.string().min(1) }),
  z.strictObject({ subtype: z.literal("get_usage"), skip_behaviors: z.boolean().optional() }),
  z.strictObject({ subtype: z.literal("mcp_status") }),
  z.strictObject({ subtype: z.literal("get_session_cost") }),
  z.strictObject({ subtype: z.literal("get_settings") }),
  z.strictObject({ subtype: z.literal("list_models") }),
  /** Fuzzy file and folder names under the CLI's cwd (an empty query lists the top level). */
  z.strictObject({ subtype: z.literal("file_suggestions"), query: z.string().max(1000) }),
  z.strictObject({ subtype: z.literal("get_binary_version") }),
]);

/** A host → CLI control request body. */
export type HostControlRequest = z.infer<typeof ZHostControlRequest>;

/** The `subtype` values of {@link HostControlRequest}. */
export type HostControlSubtype = HostControlRequest["subtype"];

/** Encodes `{"type":"control_request","request_id":…,"request":{…}}`; `request` is never missing. */
export function encodeControlRequest(requestId: string, request: HostControlRequest): string {
  const id = parse(ZRequestId, requestId, "control request id");
  const body = parse(ZHostControlRequest, request, `control request ${describe(request)}`);
  return serialize({ type: "control_request", request_id: id, request: body }, "control request");
}

// ---------------------------------------------------------------------------------------------
// Host → CLI control responses

const ZRuleDestination = z.enum(["userSettings", "projectSettings", "localSettings", "session", "cliArg"]);

/** A permission update sent with an `allow` (e.g. an accepted suggestion). */
export const ZPermissionUpdate = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.enum(["addRules", "replaceRules", "removeRules"]),
    rules: z.array(z.strictObject({ toolName: z.string().min(1), ruleContent: z.string().optional() })).min(1),
    behavior: z.enum(["allow", "deny", "ask"]),
    destination: ZRuleDestination,
  }),
  z.strictObject({ type: z.literal("setMode"), mode: ZPermissionMode, destination: ZRuleDestination }),
  z.strictObject({
    type: z.enum(["addDirectories", "removeDirectories"]),
    directories: z.array(z.string().min(1)).min(1),
    destination: ZRuleDestination,
  }),
]);

/** A permission update sent with an `allow`. */
export type PermissionUpdateInput = z.infer<typeof ZPermissionUpdate>;

/**
 * The answer to `can_use_tool`. `allow` always carries the input to run (the approver may have
 * edited it); `deny` always carries a message the model will read. `interrupt: true` also ends
 * the turn (the CLI then replaces the message with its standard rejection text).
 */
export const ZPermissionDecision = z.discriminatedUnion("behavior", [
  z.strictObject({
    behavior: z.literal("allow"),
    updatedInput: ZJsonObject,
    updatedPermissions: z.array(ZPermissionUpdate).optional(),
  }),
  z.strictObject({
    behavior: z.literal("deny"),
    message: z.string().refine(nonBlank, "message must not be blank"),
    interrupt: z.boolean().optional(),
  }),
]);

/** The answer to `can_use_tool`. */
export type PermissionDecision = z.infer<typeof ZPermissionDecision>;

/** Encodes the answer to a `can_use_tool` request. */
export function encodePermissionDecision(requestId: string, decision: PermissionDecision): string {
  const id = parse(ZRequestId, requestId, "control response id");
  const data = parse(ZPermissionDecision, decision, "permission decision");
  return successLine(id, data);
}

/**
 * Encodes a success answer to any other CLI → host request (hook output, MCP response,
 * elicitation result). The payload must be a JSON object.
 */
export function encodeControlSuccess(requestId: string, payload: Record<string, unknown> = {}): string {
  const id = parse(ZRequestId, requestId, "control response id");
  const data = parse(ZJsonObject, payload, "control response payload");
  return successLine(id, data);
}

/** Encodes an error answer (`error_code` optional, e.g. `unsupported_request`). */
export function encodeControlError(requestId: string, message: string, errorCode?: string): string {
  const id = parse(ZRequestId, requestId, "control response id");
  const text = parse(z.string().refine(nonBlank, "error must not be blank"), message, "control error");
  const code = parse(z.string().min(1).optional(), errorCode, "control error code");
  const response: Record<string, unknown> = { subtype: "error", request_id: id, error: text };
  if (code !== undefined) response.error_code = code;
  return serialize({ type: "control_response", response }, "control response");
}

function successLine(requestId: string, payload: Record<string, unknown>): string {
  return serialize(
    { type: "control_response", response: { subtype: "success", request_id: requestId, response: payload } },
    "control response",
  );
}

// ---------------------------------------------------------------------------------------------

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  let result: z.ZodSafeParseResult<T>;
  try {
    result = schema.safeParse(value);
  } catch (err) {
    throw new EncodeError(what, [err instanceof Error ? err.message : String(err)]);
  }
  if (result.success) return result.data;
  throw new EncodeError(
    what,
    result.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`),
  );
}

const HAS_LINE_SEPARATOR = /[\u2028\u2029]/;
const LINE_SEPARATORS = /[\u2028\u2029]/g;

/**
 * The single exit of this module. `JSON.stringify` escapes `\n` and `\r` inside strings and
 * puts none between tokens; U+2028/U+2029 are escaped too so that no line splitter of any
 * kind can cut the line. The final check makes the one-line guarantee unconditional.
 */
function serialize(value: Record<string, unknown>, what: string): string {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new EncodeError(what, [err instanceof Error ? err.message : String(err)]);
  }
  if (HAS_LINE_SEPARATOR.test(text)) {
    text = text.replace(LINE_SEPARATORS, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
  }
  if (text.includes("\n") || text.includes("\r")) {
    throw new EncodeError(what, ["serialized text contains a raw line break"]);
  }
  return `${text}\n`;
}

function describe(request: unknown): string {
  const subtype =
    typeof request === "object" && request !== null ? (request as { subtype?: unknown }).subtype : undefined;
  return typeof subtype === "string" ? subtype : "(no subtype)";
}
