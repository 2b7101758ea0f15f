// Request bodies of the Messages API, validated loosely: only the fields the scripted model reads
// are checked, everything else the CLI sends (thinking, context_management, metadata…) passes.
import { z } from "zod";

/** Any content block; the fields of the kinds we read are narrowed where they are read. */
export const ZContentBlock = z.looseObject({ type: z.string() });
export type ContentBlock = z.infer<typeof ZContentBlock>;

/** `system` role messages are the CLI's mid-conversation system turns (the environment block lives in one). */
export const ZMessage = z.looseObject({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(ZContentBlock)]),
});
export type Message = z.infer<typeof ZMessage>;

const ZSystemPrompt = z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]);

const ZTool = z.looseObject({ name: z.string() });

export const ZMessagesRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ZMessage).min(1),
  max_tokens: z.number().int().positive(),
  stream: z.boolean().optional(),
  system: ZSystemPrompt.optional(),
  tools: z.array(ZTool).optional(),
});
export type MessagesRequest = z.infer<typeof ZMessagesRequest>;

export const ZCountTokensRequest = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ZMessage),
  system: ZSystemPrompt.optional(),
  tools: z.array(ZTool).optional(),
});
export type CountTokensRequest = z.infer<typeof ZCountTokensRequest>;

/** One line per issue, `path: message`, as the real API names the offending field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : "body"}: ${issue.message}`)
    .join("; ");
}
