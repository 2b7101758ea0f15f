// The vocabulary of scripted model behaviour: what one model call answers (a step) and
// how a conversation picks its steps (a scenario). Types and small builders only.
import type { MessagesRequest } from "./api-schema";

/** Token figures reported for one model call; cost tests compute expected USD from them. */
export interface StepUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** One `tool_use` block. Relative `file_path` / `notebook_path` / `path` values become absolute (CLI's cwd). */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Fixed block id; generated (`toolu_…`) when absent. */
  id?: string;
}

/** A normal answer: an optional text block followed by zero or more tool_use blocks. */
export interface ReplyStep {
  text?: string;
  /** Explicit stream chunks (their concatenation is the text); otherwise the text is split automatically. */
  chunks?: readonly string[];
  /** Pause before each text chunk, for slow-stream and interrupt tests. */
  chunkDelayMs?: number;
  /** Pause before the response starts (before any header is sent). */
  delayMs?: number;
  tools?: readonly ToolCall[];
  usage?: Partial<StepUsage>;
  /** Defaults to `tool_use` when the step has tools, else `end_turn`. */
  stopReason?: "end_turn" | "tool_use" | "max_tokens" | "stop_sequence";
  /** Model name reported in the response; defaults to the requested model. */
  model?: string;
}

export const ApiErrorKind = {
  rateLimit: "rate_limit",
  server: "server",
  overloaded: "overloaded",
  invalidRequest: "invalid_request",
  authentication: "authentication",
  /** A 200 stream that breaks off with an SSE `event: error` (the CLI then retries non-streaming). */
  midstream: "midstream",
} as const;
export type ApiErrorKind = (typeof ApiErrorKind)[keyof typeof ApiErrorKind];

/**
 * A failing answer. It is served `times` times (default 1) for the model call it precedes, then
 * that call gets the next reply step: the CLI retries the same request, and the step index is
 * derived from the conversation, so an error must be consumed by being served.
 */
export interface ErrorStep {
  error: ApiErrorKind;
  /** `retry-after` header in seconds (429 by default sends 1). */
  retryAfterSeconds?: number;
  /** How many consecutive requests fail; `Infinity` never recovers (retries exhausted). */
  times?: number;
  message?: string;
  /** For `midstream`: text streamed before the error event. */
  partialText?: string;
}

/** A tool_result the model is shown, flattened to text. */
export interface ToolResultSeen {
  toolUseId: string;
  isError: boolean;
  text: string;
}

/** A tool_use the model already made in the current turn (assistant messages after the prompt). */
export interface ToolUseSeen {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** What a dynamic step sees about the request it answers. */
export interface StepContext {
  scenario: string;
  /** Number of assistant messages after the prompt: 0 for the first model call of a turn. */
  stepIndex: number;
  /** The latest real user prompt, system reminders removed. */
  prompt: string;
  /** The CLI's working directory as stated in its system prompt, when found. */
  cwd: string | undefined;
  /** Tool results after the last assistant message (what the model was just shown). */
  lastToolResults: readonly ToolResultSeen[];
  /** Tool calls made since the prompt, oldest first. */
  toolUsesSincePrompt: readonly ToolUseSeen[];
  /** Tool results since the prompt, oldest first. */
  toolResultsSincePrompt: readonly ToolResultSeen[];
  model: string;
  request: MessagesRequest;
}

export type ResolvedStep = ReplyStep | ErrorStep;
export type DynamicStep = (ctx: StepContext) => ResolvedStep;
export type Step = ResolvedStep | DynamicStep;

/**
 * A scenario answers every model call of a turn. `steps` as a list: call k (k assistant messages
 * after the prompt) takes the k-th reply step, each preceded by the error steps written before
 * it. `steps` as a function: it picks the step itself (`undefined` → the final text).
 */
export interface Scenario {
  name: string;
  steps: readonly Step[] | ((ctx: StepContext) => ResolvedStep | undefined);
  /** Whole words that select this scenario when the prompt carries no `[scenario:…]` tag. */
  triggers?: readonly string[];
  description?: string;
}

/** Type guard separating failing steps from replies. */
export function isErrorStep(step: ResolvedStep): step is ErrorStep {
  return "error" in step;
}

/** A text-only reply. */
export function say(text: string, options: Omit<ReplyStep, "text"> = {}): ReplyStep {
  return { ...options, text };
}

/** A reply made of one or more tool calls, optionally preceded by text. */
export function callTools(tools: readonly ToolCall[], options: Omit<ReplyStep, "tools"> = {}): ReplyStep {
  return { ...options, tools };
}

/** A reply with a single tool call. */
export function callTool(
  name: string,
  input: Record<string, unknown>,
  options: Omit<ReplyStep, "tools"> = {},
): ReplyStep {
  return callTools([{ name, input }], options);
}

/** A failing step. */
export function fail(error: ApiErrorKind, options: Omit<ErrorStep, "error"> = {}): ErrorStep {
  return { ...options, error };
}
