// Reads what the scripted model needs out of one request. Pure: the same request always gives the
// same view, which is what lets the model server survive CLI restarts and resumes without state.
import type { ContentBlock, Message, MessagesRequest } from "./api-schema";
import type { ToolResultSeen, ToolUseSeen } from "./scenario";

export interface ConversationView {
  /** Text of the latest real user prompt (not a tool_result message), the CLI's own additions removed. */
  prompt: string;
  /** Index of that prompt in `messages`, -1 when there is none. */
  promptIndex: number;
  /** Assistant messages after the prompt: how many model calls of this turn were already answered. */
  stepIndex: number;
  cwd: string | undefined;
  lastToolResults: ToolResultSeen[];
  toolUsesSincePrompt: ToolUseSeen[];
  toolResultsSincePrompt: ToolResultSeen[];
}

// Text the CLI adds to user messages itself: reminders, and the echo of a local slash command
// (`set_model` leaves `/model` with its caveat and stdout in front of the next prompt).
const cliWrapperPattern =
  /<(system-reminder|local-command-caveat|local-command-stdout|local-command-stderr|command-name|command-message|command-args)>[\s\S]*?<\/\1>/g;
// The CLI states its cwd in the environment section; older builds said "Working directory".
const cwdPatterns = [/Primary working directory:\s*(\S.*)$/m, /^\s*-?\s*Working directory:\s*(\S.*)$/m];
const tagPattern = /\[scenario:([A-Za-z0-9_.-]+)\]/g;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function blocksOf(message: Message): ContentBlock[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

function textOf(block: ContentBlock): string | undefined {
  return block.type === "text" && typeof block.text === "string" ? block.text : undefined;
}

function stripCliText(text: string): string {
  return text.replace(cliWrapperPattern, "").trim();
}

/** Flattens a tool_result's content (string or blocks) to the text the model would read. */
function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => (isRecord(part) && part.type === "text" && typeof part.text === "string" ? part.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

function toolResultsIn(message: Message): ToolResultSeen[] {
  if (message.role !== "user") return [];
  return blocksOf(message)
    .filter((block) => block.type === "tool_result")
    .map((block) => ({
      toolUseId: typeof block.tool_use_id === "string" ? block.tool_use_id : "",
      isError: block.is_error === true,
      text: toolResultText(block.content),
    }));
}

function toolUsesIn(message: Message): ToolUseSeen[] {
  if (message.role !== "assistant") return [];
  return blocksOf(message)
    .filter((block) => block.type === "tool_use")
    .map((block) => ({
      id: typeof block.id === "string" ? block.id : "",
      name: typeof block.name === "string" ? block.name : "",
      input: isRecord(block.input) ? block.input : {},
    }));
}

/**
 * The prompt text of a user message, or undefined when the message is not a real prompt:
 * tool_result carriers are continuations of a turn, and reminder-only messages are the CLI's own.
 * Only the last text block counts: the CLI merges a prompt that got no answer (an API error, an
 * interrupt) and prompts queued while streaming into one message, one block each, newest last.
 */
function promptTextOf(message: Message): string | undefined {
  if (message.role !== "user") return undefined;
  const blocks = blocksOf(message);
  if (blocks.some((block) => block.type === "tool_result")) return undefined;
  const texts = blocks
    .map(textOf)
    .filter((text): text is string => text !== undefined)
    .map(stripCliText)
    .filter((text) => text !== "");
  return texts.at(-1);
}

/** The CLI's working directory from its environment section (system prompt or a `system` message). */
export function findWorkingDirectory(request: MessagesRequest): string | undefined {
  const texts: string[] = [];
  if (typeof request.system === "string") texts.push(request.system);
  else if (request.system) for (const block of request.system) if (block.text) texts.push(block.text);
  for (const message of request.messages) {
    for (const block of blocksOf(message)) {
      const text = textOf(block);
      if (text !== undefined) texts.push(text);
    }
  }
  // The latest statement wins: a resumed or compacted conversation may carry an older one first.
  for (const text of texts.reverse()) {
    for (const pattern of cwdPatterns) {
      const match = pattern.exec(text);
      if (match?.[1]) return match[1].trim();
    }
  }
  return undefined;
}

/** The last `[scenario:NAME]` tag in a prompt. */
export function findScenarioTag(prompt: string): string | undefined {
  let name: string | undefined;
  for (const match of prompt.matchAll(tagPattern)) name = match[1];
  return name;
}

/** Everything the step selection needs, derived from the request alone. */
export function readConversation(request: MessagesRequest): ConversationView {
  const { messages } = request;
  let promptIndex = -1;
  let prompt = "";
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    const text = message ? promptTextOf(message) : undefined;
    if (text !== undefined) {
      promptIndex = i;
      prompt = text;
      break;
    }
  }
  const sincePrompt = messages.slice(promptIndex + 1);
  let lastAssistant = -1;
  sincePrompt.forEach((message, i) => {
    if (message.role === "assistant") lastAssistant = i;
  });
  return {
    prompt,
    promptIndex,
    stepIndex: sincePrompt.filter((message) => message.role === "assistant").length,
    cwd: findWorkingDirectory(request),
    lastToolResults: sincePrompt.slice(lastAssistant + 1).flatMap(toolResultsIn),
    toolUsesSincePrompt: sincePrompt.flatMap(toolUsesIn),
    toolResultsSincePrompt: sincePrompt.flatMap(toolResultsIn),
  };
}

/**
 * Compact picture of the request's messages for logs and test assertions,
 * e.g. `u[text] a[text,tool_use] u[tool_result]`.
 */
export function summarizeShape(messages: readonly Message[]): string {
  return messages
    .map((message) => {
      const role = message.role === "user" ? "u" : message.role === "assistant" ? "a" : "s";
      const kinds = typeof message.content === "string" ? "str" : message.content.map((block) => block.type).join(",");
      return `${role}[${kinds}]`;
    })
    .join(" ");
}
