/**
 * Types of the lines the Claude Code CLI prints on stdout in stream-json mode (verified against
 * CLI 2.1.332; the protocol reference's §4–§5 describe each frame). Types and constants only.
 *
 * Typing rule: a field is required only when `decodeLine` checks it; every other field is
 * optional, because the CLI adds, drops and renames fields between builds and the decoder
 * does not validate whole objects (it runs on every stdout line, see `decode-line.ts`).
 * Decoded values are the parsed objects themselves, so fields not listed here are still
 * present at runtime; the raw line text is kept next to each value for persistence.
 */

/** Permission modes `set_permission_mode` accepts and `system/init` reports. */
export const PermissionMode = {
  default: "default",
  acceptEdits: "acceptEdits",
  plan: "plan",
  dontAsk: "dontAsk",
  auto: "auto",
  bypassPermissions: "bypassPermissions",
} as const;

/** One of the six permission modes. */
export type PermissionMode = (typeof PermissionMode)[keyof typeof PermissionMode];

/** A JSON object whose fields are not typed further. */
export type JsonObject = Record<string, unknown>;

/** Fields that most stdout frames carry. */
export interface FrameBase {
  /** Frame id; stable across replays. */
  uuid?: string;
  /** The claude session id at the time the frame was printed (changes on `/clear`). */
  session_id?: string;
}

// ---------------------------------------------------------------------------------------------
// Content blocks (Messages API shapes, as the CLI forwards them)

/** Plain text. */
export interface TextBlock {
  type: "text";
  text: string;
}

/** Extended thinking (partial mode shows it streaming). */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature?: string;
}

/** Thinking the API returned encrypted. */
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

/** A tool call proposed by the model. `name` may differ from `system/init.tools` (Agent vs Task). */
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: JsonObject;
}

/** A tool's answer as the model sees it. */
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

/** An image (base64 or URL source). */
export interface ImageBlock {
  type: "image";
  source: JsonObject;
}

/**
 * A content block. Other block types (server tool results, documents…) can appear;
 * switch on `type` and ignore what you do not know.
 */
export type ContentBlock =
  | TextBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock
  | ImageBlock;

/** Token counts of one API call or one turn (`usage` objects). */
export interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number };
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number };
  service_tier?: string;
}

/** Cumulative usage of one model inside `result.modelUsage` (camelCase on the wire). */
export interface ModelUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  webSearchRequests?: number;
  costUSD?: number;
  contextWindow?: number;
  maxOutputTokens?: number;
  canonicalModel?: string;
  costBasis?: string;
}

// ---------------------------------------------------------------------------------------------
// system/*

/** `system/init`: printed at the start of every turn (not once per process). */
export interface SystemInitMessage extends FrameBase {
  type: "system";
  subtype: "init";
  session_id: string;
  model: string;
  permissionMode: string;
  cwd?: string;
  tools?: string[];
  mcp_servers?: Array<{ name: string; status: string; source?: string }>;
  slash_commands?: string[];
  agents?: string[];
  skills?: string[];
  apiKeySource?: string;
  claude_code_version?: string;
  output_style?: string;
  capabilities?: string[];
}

/**
 * `system/status`: `requesting` before an API call (partial mode), `compacting`, then
 * `status: null` with `compact_result`, or `status: null` with `permissionMode` after a mode change.
 */
export interface SystemStatusMessage extends FrameBase {
  type: "system";
  subtype: "status";
  status: string | null;
  permissionMode?: string;
  compact_result?: "success" | "failed";
  compact_error?: string;
  user_message_uuids?: string[];
}

/** `system/compact_boundary`: history was compacted; a summary `user` frame follows. */
export interface SystemCompactBoundaryMessage extends FrameBase {
  type: "system";
  subtype: "compact_boundary";
  compact_metadata: {
    trigger?: "manual" | "auto";
    pre_tokens?: number;
    post_tokens?: number;
    cumulative_dropped_tokens?: number;
    duration_ms?: number;
  };
  logical_parent_uuid?: string | null;
}

/** `system/api_retry`: one per retried Messages API call. */
export interface SystemApiRetryMessage extends FrameBase {
  type: "system";
  subtype: "api_retry";
  attempt: number;
  max_retries?: number;
  retry_delay_ms?: number;
  error_status?: number | null;
  error?: string;
}

/** `system/permission_denied`: an automatic denial (mode, rule, classifier) — never a host denial. */
export interface SystemPermissionDeniedMessage extends FrameBase {
  type: "system";
  subtype: "permission_denied";
  tool_name: string;
  tool_use_id?: string;
  decision_reason_type?: string;
  decision_reason_code?: string;
  decision_reason?: string;
  message?: string;
}

/** `system/informational`: a notice for the user (e.g. tag `auto_mode_no_server_check`). */
export interface SystemInformationalMessage extends FrameBase {
  type: "system";
  subtype: "informational";
  content: string;
  level?: string;
  tag?: string;
}

/** `system/hook_started` (only with `--include-hook-events`). */
export interface SystemHookStartedMessage extends FrameBase {
  type: "system";
  subtype: "hook_started";
  hook_id: string;
  hook_name?: string;
  hook_event?: string;
}

/** `system/hook_response`: a command hook finished. */
export interface SystemHookResponseMessage extends FrameBase {
  type: "system";
  subtype: "hook_response";
  hook_id: string;
  hook_name?: string;
  hook_event?: string;
  output?: string;
  stdout?: string;
  stderr?: string;
  exit_code?: number;
  outcome?: string;
}

/** `system/hook_progress`: known from the SDK types only, never observed. */
export interface SystemHookProgressMessage extends FrameBase {
  type: "system";
  subtype: "hook_progress";
  hook_id: string;
  hook_name?: string;
  hook_event?: string;
  stdout?: string;
  stderr?: string;
  output?: string;
}

/** `system/task_started`: a long foreground Bash (`local_bash`) or a subagent (`local_agent`). */
export interface SystemTaskStartedMessage extends FrameBase {
  type: "system";
  subtype: "task_started";
  task_id: string;
  tool_use_id?: string;
  description?: string;
  task_type?: string;
  subagent_type?: string;
  is_backgrounded?: boolean;
}

/** `system/task_progress`: a running task reports usage. */
export interface SystemTaskProgressMessage extends FrameBase {
  type: "system";
  subtype: "task_progress";
  task_id: string;
  tool_use_id?: string;
  description?: string;
  usage?: { total_tokens?: number; tool_uses?: number; duration_ms?: number };
  last_tool_name?: string;
}

/** `system/task_updated`: a patch to a task's record (`patch.status`, `patch.end_time`…). */
export interface SystemTaskUpdatedMessage extends FrameBase {
  type: "system";
  subtype: "task_updated";
  task_id: string;
  patch?: JsonObject;
}

/** `system/task_notification`: a task finished. */
export interface SystemTaskNotificationMessage extends FrameBase {
  type: "system";
  subtype: "task_notification";
  task_id: string;
  status?: string;
  tool_use_id?: string;
  summary?: string;
  output_file?: string;
}

/** `system/background_tasks_changed`: the full set of background tasks (replace semantics). */
export interface SystemBackgroundTasksChangedMessage extends FrameBase {
  type: "system";
  subtype: "background_tasks_changed";
  tasks: JsonObject[];
}

/** `system/session_state_changed` (only with the SDK session-state env vars). */
export interface SystemSessionStateChangedMessage extends FrameBase {
  type: "system";
  subtype: "session_state_changed";
  state: string;
}

/** `system/session_title_changed`: after `rename_session`. */
export interface SystemSessionTitleChangedMessage extends FrameBase {
  type: "system";
  subtype: "session_title_changed";
  title: string;
}

/** `system/thinking_tokens`: running estimate during thinking blocks (partial mode). */
export interface SystemThinkingTokensMessage extends FrameBase {
  type: "system";
  subtype: "thinking_tokens";
  estimated_tokens: number;
  estimated_tokens_delta?: number;
}

/** Every `system` subtype the decoder knows. Others decode to {@link UnknownMessage}. */
export type SystemMessage =
  | SystemInitMessage
  | SystemStatusMessage
  | SystemCompactBoundaryMessage
  | SystemApiRetryMessage
  | SystemPermissionDeniedMessage
  | SystemInformationalMessage
  | SystemHookStartedMessage
  | SystemHookResponseMessage
  | SystemHookProgressMessage
  | SystemTaskStartedMessage
  | SystemTaskProgressMessage
  | SystemTaskUpdatedMessage
  | SystemTaskNotificationMessage
  | SystemBackgroundTasksChangedMessage
  | SystemSessionStateChangedMessage
  | SystemSessionTitleChangedMessage
  | SystemThinkingTokensMessage;

/** The `subtype` values of {@link SystemMessage}. */
export type SystemSubtype = SystemMessage["subtype"];

// ---------------------------------------------------------------------------------------------
// Conversation frames

/**
 * `conversation_reset`: `/clear` started a new conversation. The frame still carries the old
 * `session_id`; the new id shows up on the next `system/init` (in 2.1.332 it was NOT equal to
 * `new_conversation_id`).
 */
export interface ConversationResetMessage extends FrameBase {
  type: "conversation_reset";
  new_conversation_id: string;
  trigger?: string;
  user_message_uuid?: string;
  timestamp?: string;
}

/**
 * `assistant`: one line per completed content block; several lines share `message.id`.
 * `stop_reason` and `usage` here are not final (use `result`).
 */
export interface AssistantMessage extends FrameBase {
  type: "assistant";
  message: {
    id?: string;
    type?: "message";
    role?: "assistant";
    /** `"<synthetic>"` for local output and API-error placeholders. */
    model?: string;
    content: ContentBlock[];
    stop_reason?: string | null;
    usage?: Usage;
  };
  parent_tool_use_id?: string | null;
  /** The block was cut short by an interrupt. */
  aborted?: boolean;
  /** API failure category on synthetic error messages (`server_error`, `rate_limit`…). */
  error?: string;
  is_api_error_message?: boolean;
  api_error_status?: number | null;
  /** Subagent frames. */
  agent_id?: string;
  subagent_type?: string;
  user_message_uuid?: string;
  user_message_uuids?: string[];
  request_id?: string;
  timestamp?: string;
}

/** Per-tool-call permission outcome the CLI attaches to tool results (not in `sdk.d.ts`). */
export interface ToolResultMeta {
  id: string;
  permission_decision?: {
    decision: "accept" | "reject";
    source?: string;
    reason_type?: string;
  };
  non_execution_kind?: string;
}

/** `user` frames the CLI prints: tool results, interrupt markers, compaction summaries, replays. */
export interface UserMessage extends FrameBase {
  type: "user";
  message: { role?: "user"; content: string | ContentBlock[] };
  parent_tool_use_id?: string | null;
  /** The tool's structured output; a plain string (`"Error: …"`) when the tool failed. */
  tool_use_result?: JsonObject | string;
  tool_result_meta?: ToolResultMeta[];
  /** Echo of a host message (`--replay-user-messages`). */
  isReplay?: boolean;
  isSynthetic?: boolean;
  timestamp?: string;
}

/** Known `result` subtypes. */
export type ResultSubtype =
  | "success"
  | "error_during_execution"
  | "error_max_turns"
  | "error_max_budget_usd"
  | "error_max_structured_output_retries";

/**
 * `result`: exactly one per turn. Check `is_error`, not `subtype` — an API failure after
 * retries ends with `subtype: "success"` and `is_error: true`. Any subtype string is accepted
 * so that a turn end is never missed; `subtype` may therefore hold a value outside
 * {@link ResultSubtype} on a newer CLI.
 */
export interface ResultMessage extends FrameBase {
  type: "result";
  subtype: ResultSubtype;
  is_error: boolean;
  /** Final text (success only; absent on `error_*`). */
  result?: string;
  /** Error texts (`error_*` only). */
  errors?: string[];
  num_turns?: number;
  stop_reason?: string | null;
  terminal_reason?: string;
  duration_ms?: number;
  duration_api_ms?: number;
  /** Cumulative for the process/conversation; resets on `/clear` and on a resume after a crash; a fork carries on from the saved total (transcript resume-continue-fork). */
  total_cost_usd?: number;
  /**
   * CLI 1.0.x (before `total_cost_usd`): the same cumulative figure under its old name
   * (recordings 01–09 of `../shared/transcripts-real`). Read through {@link resultTotalCostUsd}.
   */
  total_cost?: number;
  /** CLI 1.0.x: equal to `total_cost` in every recorded run; the last fallback. */
  cost_usd?: number;
  /** This turn only. */
  usage?: Usage;
  /** Cumulative per model, keyed by the requested model name. */
  modelUsage?: Record<string, ModelUsage>;
  /** Per-turn delta per model (not in `sdk.d.ts`). */
  model_usage_since_last_result?: Record<string, ModelUsage>;
  permission_denials?: Array<{ tool_name: string; tool_use_id: string; tool_input: JsonObject }>;
  /** Counts results 0, 1, 2… per process. */
  result_index?: number;
  /** The prompts this result answers (present when they were sent with a `uuid`). */
  user_message_uuid?: string;
  user_message_uuids?: string[];
  api_error_status?: number | null;
  api_error_type?: string;
  startup_failure_reason?: string;
}

/** `stream_event` (only with `--include-partial-messages`): a raw Messages API SSE event. */
export interface StreamEventMessage extends FrameBase {
  type: "stream_event";
  event: {
    type: string;
    index?: number;
    delta?: JsonObject;
    content_block?: JsonObject;
    message?: JsonObject;
    usage?: Usage;
    abandoned_blocks?: { api_message_id?: string; from_block_index?: number };
  };
  parent_tool_use_id?: string | null;
  api_message_id?: string;
  ttft_ms?: number;
  user_message_uuid?: string;
  user_message_uuids?: string[];
}

/** States of a host message that carried a `uuid` (`command_lifecycle`, not in `sdk.d.ts`). */
export type CommandLifecycleState = "queued" | "started" | "completed" | "cancelled";

/**
 * `command_lifecycle`: progress of a host message sent with a `uuid`. `completed` and
 * `cancelled` arrive after the turn's `result`.
 */
export interface CommandLifecycleMessage extends FrameBase {
  type: "command_lifecycle";
  command_uuid: string;
  state: CommandLifecycleState;
}

/** `keep_alive`: declared by the SDK, never observed. */
export interface KeepAliveMessage {
  type: "keep_alive";
}

// ---------------------------------------------------------------------------------------------
// Control protocol (CLI → host)

/** A permission change the CLI suggests, or the host grants with an `allow`. */
export type PermissionUpdate =
  | {
      type: "addRules" | "replaceRules" | "removeRules";
      rules: Array<{ toolName: string; ruleContent?: string }>;
      behavior: "allow" | "deny" | "ask";
      destination: PermissionUpdateDestination;
    }
  | { type: "setMode"; mode: PermissionMode; destination: PermissionUpdateDestination }
  | {
      type: "addDirectories" | "removeDirectories";
      directories: string[];
      destination: PermissionUpdateDestination;
    };

/** Where a permission update is stored. */
export type PermissionUpdateDestination = "userSettings" | "projectSettings" | "localSettings" | "session" | "cliArg";

/** `can_use_tool`: the CLI asks whether a tool call may run. It waits forever for an answer. */
export interface CanUseToolRequest {
  subtype: "can_use_tool";
  tool_name: string;
  input: JsonObject;
  tool_use_id?: string;
  display_name?: string;
  description?: string;
  title?: string;
  permission_suggestions?: PermissionUpdate[];
  blocked_path?: string;
  decision_reason?: string;
  decision_reason_type?: string;
  /** Set for subagent tool calls. */
  agent_id?: string;
  mcp_server?: { name: string; source?: string };
  /** AskUserQuestion and ExitPlanMode: a person must answer, not a policy. */
  requires_user_interaction?: boolean;
}

/** `hook_callback`: an SDK hook registered in `initialize.hooks` fired. The turn waits. */
export interface HookCallbackRequest {
  subtype: "hook_callback";
  callback_id: string;
  input: JsonObject & { hook_event_name?: string };
  tool_use_id?: string | null;
}

/** `mcp_message`: a JSON-RPC message for an in-process (SDK) MCP server. */
export interface McpMessageRequest {
  subtype: "mcp_message";
  server_name: string;
  message: JsonObject & { jsonrpc?: string; id?: string | number; method?: string };
}

/** `elicitation`: an MCP server asks the user for input (SDK types only). */
export interface ElicitationRequest {
  subtype: "elicitation";
  mcp_server_name: string;
  message: string;
  mode?: string;
  url?: string;
  requested_schema?: JsonObject;
}

/** `request_user_dialog`: only for kinds declared in `initialize.supportedDialogKinds` (SDK types only). */
export interface RequestUserDialogRequest {
  subtype: "request_user_dialog";
  dialog_kind: string;
  payload?: unknown;
}

/**
 * A control request the decoder does not know, or a known one whose fields failed the
 * decoder's checks (`problem` says which). It still has a `request_id`, so it can and must
 * be answered.
 */
export interface UnknownControlRequest {
  subtype: "unknown";
  /** The `subtype` as printed (empty when missing). */
  originalSubtype: string;
  /** The `request` object as printed. */
  value: JsonObject;
  /** Why a known subtype was not accepted; absent for unknown subtypes. */
  problem?: string;
}

/** Body of a CLI → host `control_request`. */
export type CliControlRequestBody =
  | CanUseToolRequest
  | HookCallbackRequest
  | McpMessageRequest
  | ElicitationRequest
  | RequestUserDialogRequest
  | UnknownControlRequest;

/** `control_request` printed by the CLI (request ids are UUIDs). */
export interface ControlRequestMessage {
  type: "control_request";
  request_id: string;
  request: CliControlRequestBody;
}

/** A successful answer to a host → CLI control request. */
export interface ControlSuccessResponse {
  subtype: "success";
  /** Missing only when the request itself had no id. */
  request_id?: string;
  response?: JsonObject;
}

/** A failed host → CLI control request (`error_code` e.g. `unsupported_request`, `invalid_mode`). */
export interface ControlErrorResponse {
  subtype: "error";
  request_id?: string;
  error: string;
  error_code?: string;
}

/** `control_response` printed by the CLI (also echoes of the host's, with `--replay-user-messages`). */
export interface ControlResponseMessage {
  type: "control_response";
  response: ControlSuccessResponse | ControlErrorResponse;
  /** Unanswered prompts, on `initialize` responses. */
  pending_permission_requests?: ControlRequestMessage[];
  pending_user_dialog_requests?: ControlRequestMessage[];
}

/** `control_cancel_request`: the CLI withdrew a request it made (e.g. a prompt, after an interrupt). */
export interface ControlCancelRequestMessage {
  type: "control_cancel_request";
  request_id: string;
}

// ---------------------------------------------------------------------------------------------

/** Why a decoded object is an {@link UnknownMessage}. */
export type UnknownReason = "type" | "subtype" | "state";

/**
 * A well-formed JSON object whose `type` (or `system` subtype, or `command_lifecycle` state)
 * this decoder does not know. Kept, logged, never fatal: the CLI emits frames absent from
 * its own SDK types.
 */
export interface UnknownMessage {
  type: "unknown";
  reason: UnknownReason;
  originalType: string;
  originalSubtype?: string;
  /** The parsed object, untouched. */
  value: JsonObject;
}

/** Every value `decodeLine` can produce for a well-formed line. */
export type CliMessage =
  | SystemMessage
  | ConversationResetMessage
  | AssistantMessage
  | UserMessage
  | ResultMessage
  | StreamEventMessage
  | ControlRequestMessage
  | ControlResponseMessage
  | ControlCancelRequestMessage
  | CommandLifecycleMessage
  | KeepAliveMessage
  | UnknownMessage;

/** The `type` values of {@link CliMessage}. */
export type CliMessageType = CliMessage["type"];

/**
 * A result's cumulative cost in USD: `total_cost_usd`, or on CLI 1.0.x its old names
 * `total_cost` then `cost_usd`; undefined when the result reports none.
 */
export function resultTotalCostUsd(result: { total_cost_usd?: unknown; total_cost?: unknown; cost_usd?: unknown }): number | undefined {
  for (const value of [result.total_cost_usd, result.total_cost, result.cost_usd]) {
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  }
  return undefined;
}
