/**
 * The session-controls part of the Socket.IO contract: the CLI's own control requests
 * (`list_models`, `get_context_usage`, `file_suggestions`, `set_max_thinking_tokens`,
 * `cancel_async_message`, the `initialize` command list) offered to browsers, and the images a
 * prompt may carry. Reads are open to every member; changes need the editor role and carry a
 * client-made `commandId` (a retry returns the first outcome).
 */
import { z } from "zod";

export const SessionControlCommand = {
  listModels: "session:list-models",
  contextUsage: "session:context-usage",
  fileSuggestions: "session:file-suggestions",
  slashCommands: "session:slash-commands",
  setThinking: "session:set-thinking",
  cancelQueued: "session:cancel-queued",
  /** The model catalog for the new-session form, by workspace (no session yet). */
  modelCatalog: "models:list",
} as const;

const ZCommandId = z.string().min(8).max(64);
const ZSessionId = z.string().min(1).max(64);

export const ZSessionRead = z.object({ sessionId: ZSessionId });
export type SessionRead = z.infer<typeof ZSessionRead>;

export const ZModelCatalogRead = z.object({ workspace: z.string().min(1).max(100) });

export const ZFileSuggestionsRead = z.object({ sessionId: ZSessionId, query: z.string().max(500) });
export type FileSuggestionsRead = z.infer<typeof ZFileSuggestionsRead>;

/** Largest thinking budget a person may set (tokens); `null` turns the explicit budget off. */
export const maxThinkingTokens = 128_000;

export const ZSetThinking = z.object({
  sessionId: ZSessionId,
  maxThinkingTokens: z.number().int().min(0).max(maxThinkingTokens).nullable(),
  commandId: ZCommandId,
});
export type SetThinking = z.infer<typeof ZSetThinking>;

export const ZCancelQueued = z.object({
  sessionId: ZSessionId,
  /** The seq of the queued prompt's event in the log. */
  promptSeq: z.number().int().min(1),
  commandId: ZCommandId,
});
export type CancelQueued = z.infer<typeof ZCancelQueued>;

// ---------------------------------------------------------------------------------------------
// Images in prompts (the Messages API's limits)

/** Image types the Messages API accepts. */
export const promptImageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;
export type PromptImageType = (typeof promptImageTypes)[number];
/** Most bytes one image may have (the API's 5 MB). */
export const maxPromptImageBytes = 5 * 1024 * 1024;
/** Most images one prompt may carry (the API allows more; 20 keeps a prompt within its request size). */
export const maxPromptImages = 20;
/** Most image bytes in one prompt altogether: the API refuses requests over 32 MB, and base64 adds a third. */
export const maxPromptImageTotalBytes = 20 * 1024 * 1024;

/** Decoded size of a base64 string (without decoding it). */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

const base64 = /^[A-Za-z0-9+/]*={0,2}$/;

export const ZPromptImage = z.object({
  mediaType: z.enum(promptImageTypes, {
    error: "Only PNG, JPEG, GIF and WebP images can be sent.",
  }),
  /** The image's bytes, base64 (no `data:` prefix). */
  data: z
    .string()
    .min(4, "An image is empty.")
    .max(Math.ceil(maxPromptImageBytes / 3) * 4 + 4, `An image may have at most ${maxPromptImageBytes / 1024 / 1024} MB.`)
    .refine((d) => d.length % 4 === 0 && base64.test(d), "An image's data is not base64.")
    .refine((d) => base64Bytes(d) <= maxPromptImageBytes, `An image may have at most ${maxPromptImageBytes / 1024 / 1024} MB.`),
  /** The file name it was pasted or dropped as, for people (optional). */
  name: z.string().max(200).optional(),
});
export type PromptImage = z.infer<typeof ZPromptImage>;

export const ZPromptImages = z
  .array(ZPromptImage)
  .max(maxPromptImages, `A prompt may carry at most ${maxPromptImages} images.`)
  .refine(
    (images) => images.reduce((n, i) => n + base64Bytes(i.data), 0) <= maxPromptImageTotalBytes,
    `The images of one prompt may have at most ${maxPromptImageTotalBytes / 1024 / 1024} MB together.`,
  );

/** An image as a stored prompt event names it; the bytes are served by the session's image route. */
export interface PromptImageRef {
  id: string;
  mediaType: PromptImageType;
  bytes: number;
  name?: string;
}

// ---------------------------------------------------------------------------------------------
// Replies

/** One entry of the CLI's `list_models` answer. */
export interface ModelOption {
  /** What `--model` / `set_model` take (`default`, `opus`, `sonnet`, or a full id). */
  value: string;
  /** The model id it resolves to today. */
  resolvedModel?: string;
  displayName: string;
  description?: string;
  /**
   * The model thinks adaptively: the CLI 2.1.332 sends `thinking: {type: "adaptive"}` for it
   * whatever `set_max_thinking_tokens` says (the budget reaches only fixed-budget models).
   */
  adaptiveThinking?: boolean;
}

export interface ModelList {
  models: ModelOption[];
  /** `cli`: asked of a live CLI just now; `cache`: the last answer any CLI gave this sidecar; `none`: no CLI has answered yet. */
  source: "cli" | "cache" | "none";
}

/** One category of `get_context_usage` (system prompt, tools, messages, free space, …). */
export interface ContextCategory {
  name: string;
  tokens: number;
  /** `used`, `deferred`, `buffer`, `free` as the CLI reports it. */
  kind: string;
}

export interface ContextUsage {
  totalTokens: number;
  maxTokens: number;
  /** Whole percent used, 0–100, as the CLI computes it. */
  percentage: number;
  model?: string;
  categories: ContextCategory[];
}

export interface FileSuggestions {
  suggestions: { path: string }[];
}

export interface SlashCommandInfo {
  name: string;
  description?: string;
  argumentHint?: string;
}

export interface SlashCommandList {
  commands: SlashCommandInfo[];
}

/** Reply to `session:set-thinking`: the budget now in force (or kept for the next CLI). */
export interface SetThinkingResult {
  seq: number;
  maxThinkingTokens: number | null;
}

/** Reply to `session:cancel-queued`: whether the CLI dropped the prompt before it started. */
export interface CancelQueuedResult {
  seq: number;
  cancelled: boolean;
}
