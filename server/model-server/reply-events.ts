// Turns a reply step into exactly what the real Messages API sends: the SSE event sequence for
// streaming calls, or one message object for non-streaming calls. Pure, ids injected.
import path from "node:path";
import { buildApiError, type ApiErrorType } from "./api-error";
import type { ReplyStep, StepUsage, ToolCall } from "./scenario";

export interface PlannedToolUse {
  id: string;
  name: string;
  input: Record<string, unknown>;
}

/** A reply with every default settled: what both the stream and the JSON body are built from. */
export interface ReplyPlan {
  id: string;
  model: string;
  text: string | undefined;
  chunks: string[];
  chunkDelayMs: number;
  tools: PlannedToolUse[];
  usage: StepUsage;
  stopReason: NonNullable<ReplyStep["stopReason"]>;
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
  /** Pause before this event is written. */
  delayMs?: number;
}

export interface PlanOptions {
  model: string;
  cwd: string | undefined;
  /** Estimated prompt size, used when the step fixes no input figure. */
  inputTokens: number;
  newId: (prefix: "msg" | "toolu") => string;
}

// Input keys the CLI's file tools require to be absolute.
const pathKeys = ["file_path", "notebook_path", "path"] as const;

/** Makes relative paths in a tool input absolute against the CLI's cwd, so scenarios can say `notes.md`. */
export function absolutizeToolInput(input: Record<string, unknown>, cwd: string | undefined): Record<string, unknown> {
  if (cwd === undefined) return input;
  const out: Record<string, unknown> = { ...input };
  for (const key of pathKeys) {
    const value = out[key];
    if (typeof value === "string" && value !== "" && !path.isAbsolute(value)) out[key] = path.join(cwd, value);
  }
  return out;
}

/** Splits text into small word groups, the way a model streams it (whitespace kept, so chunks concatenate back). */
export function chunkText(text: string, wordsPerChunk = 3): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [text];
  const chunks: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerChunk) chunks.push(words.slice(i, i + wordsPerChunk).join(""));
  return chunks.length > 0 ? chunks : [""];
}

function chunkJson(json: string, size = 24): string[] {
  // The real API opens every tool input with an empty partial; the CLI must cope with it.
  const parts = [""];
  for (let i = 0; i < json.length; i += size) parts.push(json.slice(i, i + size));
  return parts;
}

/** Settles a reply step's defaults. Output tokens default to a rough size estimate of the reply. */
export function planReply(step: ReplyStep, options: PlanOptions): ReplyPlan {
  const text = step.chunks !== undefined ? step.chunks.join("") : step.text;
  const tools = (step.tools ?? []).map((tool: ToolCall) => ({
    id: tool.id ?? options.newId("toolu"),
    name: tool.name,
    input: absolutizeToolInput(tool.input, options.cwd),
  }));
  const outputEstimate =
    Math.ceil((text?.length ?? 0) / 4) +
    tools.reduce((sum, tool) => sum + Math.ceil(JSON.stringify(tool.input).length / 4), 0);
  return {
    id: options.newId("msg"),
    model: step.model ?? options.model,
    text,
    chunks: step.chunks !== undefined ? [...step.chunks] : text !== undefined ? chunkText(text) : [],
    chunkDelayMs: step.chunkDelayMs ?? 0,
    tools,
    usage: {
      input_tokens: step.usage?.input_tokens ?? options.inputTokens,
      output_tokens: step.usage?.output_tokens ?? Math.max(1, outputEstimate),
      cache_read_input_tokens: step.usage?.cache_read_input_tokens ?? 0,
      cache_creation_input_tokens: step.usage?.cache_creation_input_tokens ?? 0,
    },
    stopReason: step.stopReason ?? (tools.length > 0 ? "tool_use" : "end_turn"),
  };
}

function messageStart(plan: ReplyPlan): SseEvent {
  return {
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: plan.id,
        type: "message",
        role: "assistant",
        model: plan.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // The real API reports the prompt figures here and the final output count in message_delta.
        usage: { ...plan.usage, output_tokens: Math.min(1, plan.usage.output_tokens) },
      },
    },
  };
}

function textBlockEvents(index: number, chunks: readonly string[], chunkDelayMs: number): SseEvent[] {
  return [
    {
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    },
    ...chunks.map(
      (chunk): SseEvent => ({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "text_delta", text: chunk } },
        delayMs: chunkDelayMs,
      }),
    ),
  ];
}

/** The full SSE sequence of a successful streamed reply. */
export function buildStreamEvents(plan: ReplyPlan): SseEvent[] {
  const events: SseEvent[] = [messageStart(plan), { event: "ping", data: { type: "ping" } }];
  let index = 0;
  if (plan.text !== undefined) {
    events.push(...textBlockEvents(index, plan.chunks, plan.chunkDelayMs));
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  for (const tool of plan.tools) {
    events.push({
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: tool.id, name: tool.name, input: {} },
      },
    });
    for (const partial of chunkJson(JSON.stringify(tool.input))) {
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } },
      });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: plan.stopReason, stop_sequence: null },
      usage: { ...plan.usage },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return events;
}

/** A stream that starts normally and breaks off with an `error` event, as the real API does when overloaded. */
export function buildMidstreamErrorEvents(
  plan: ReplyPlan,
  errorType: ApiErrorType,
  requestId: string,
  message?: string,
): SseEvent[] {
  const { error } = buildApiError(errorType, requestId, message);
  return [
    messageStart(plan),
    { event: "ping", data: { type: "ping" } },
    ...textBlockEvents(0, plan.chunks, plan.chunkDelayMs),
    { event: "error", data: { type: "error", error } },
  ];
}

/** The non-streaming response body for the same reply. */
export function buildMessage(plan: ReplyPlan): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (plan.text !== undefined) content.push({ type: "text", text: plan.text });
  for (const tool of plan.tools) content.push({ type: "tool_use", id: tool.id, name: tool.name, input: tool.input });
  return {
    id: plan.id,
    type: "message",
    role: "assistant",
    model: plan.model,
    content,
    stop_reason: plan.stopReason,
    stop_sequence: null,
    usage: { ...plan.usage },
  };
}

/** One SSE frame on the wire. */
export function encodeSseEvent(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
