/**
 * Metering of relayed Messages answers: the usage of each answer read as it passes through the
 * proxy (never held back: the proxy writes each chunk on first, then shows it to the meter), and
 * its price in USD.
 *
 * - SSE (`text/event-stream`): `message_start` carries `message.model` and the prompt's figures
 *   (input, cache read, cache write; output is a placeholder), each `message_delta` carries
 *   cumulative figures (at least the final `output_tokens`). Later figures replace earlier ones.
 * - JSON: the message's `model` and `usage`. The body is copied aside while it streams through
 *   (up to {@link maxJsonBytes}; a larger answer is metered from what it declares nothing of).
 * - An answer cut off (the CLI went away, the upstream broke) is metered with what was seen; an
 *   error status is not metered (the API does not bill it).
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { z } from "zod";

/** Token figures of one answer (or a sum of answers). */
export interface MeteredTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Server-side web searches (`server_tool_use.web_search_requests`), billed per search. */
  webSearches: number;
}

/** One metered answer. */
export interface MeteredCall extends MeteredTokens {
  /** The model the answer names (`message.model`); null when none was seen. */
  model: string | null;
  usd: number;
}

/** USD per million tokens. */
export interface ModelRates {
  input: number;
  output: number;
  cacheRead: number;
  /** 5-minute cache writes (the CLI's; 1-hour writes are priced the same here, an under-estimate). */
  cacheWrite: number;
}

/**
 * The rates the pinned CLI applies (protocol reference §11; CLI 2.1.332). A model name is matched
 * by family; any other name is priced at the default model's rates, as the CLI prices unknown names.
 */
export const modelRates: Readonly<Record<"default" | "sonnet" | "haiku", ModelRates>> = {
  default: { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 }, // claude-opus-5-5, the CLI's default
  sonnet: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  haiku: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
};

/** USD per server-side web search ($10 per 1,000). */
export const webSearchUsd = 0.01;

/** Largest non-streamed answer the meter copies aside to read its usage. */
export const maxJsonBytes = 8 * 1024 * 1024;

/** The rates of a model name. */
export function ratesOf(model: string | null): ModelRates {
  const name = (model ?? "").toLowerCase();
  if (name.includes("haiku")) return modelRates.haiku;
  if (name.includes("sonnet")) return modelRates.sonnet;
  return modelRates.default;
}

/** The USD of `tokens` at `model`'s rates. */
export function priceOf(model: string | null, tokens: MeteredTokens): number {
  const r = ratesOf(model);
  const usd =
    (tokens.inputTokens * r.input + tokens.outputTokens * r.output + tokens.cacheReadTokens * r.cacheRead + tokens.cacheWriteTokens * r.cacheWrite) / 1_000_000 +
    tokens.webSearches * webSearchUsd;
  return Math.round(usd * 1e10) / 1e10;
}

// A figure that is missing, null or not a count leaves the one seen before.
const count = z.number().int().nonnegative().nullish().catch(undefined);
const usageSchema = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  server_tool_use: z.object({ web_search_requests: count }).nullish().catch(undefined),
});
type WireUsage = z.infer<typeof usageSchema>;

const messageSchema = z.object({ model: z.string().optional().catch(undefined), usage: usageSchema.optional().catch(undefined) });
const sseEventSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("message_start"), message: messageSchema }),
  z.object({ type: z.literal("message_delta"), usage: usageSchema.optional().catch(undefined) }),
]);

/** Watches one answer's body chunk by chunk; `result()` at its end (or when it was cut off). */
export interface AnswerMeter {
  feed(chunk: Buffer): void;
  result(): MeteredCall;
}

/** A meter for an answer with this `content-type`. */
export function meterAnswer(contentType: string | undefined): AnswerMeter {
  const state: { model: string | null; tokens: MeteredTokens } = {
    model: null,
    tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 0 },
  };
  const apply = (usage: WireUsage | undefined) => {
    if (usage === undefined) return;
    // Each figure the API sends is cumulative for the message: the latest one stands.
    const t = state.tokens;
    t.inputTokens = usage.input_tokens ?? t.inputTokens;
    t.outputTokens = usage.output_tokens ?? t.outputTokens;
    t.cacheReadTokens = usage.cache_read_input_tokens ?? t.cacheReadTokens;
    t.cacheWriteTokens = usage.cache_creation_input_tokens ?? t.cacheWriteTokens;
    t.webSearches = usage.server_tool_use?.web_search_requests ?? t.webSearches;
  };
  const result = (): MeteredCall => ({ model: state.model, ...state.tokens, usd: priceOf(state.model, state.tokens) });

  if ((contentType ?? "").toLowerCase().startsWith("text/event-stream")) {
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (event: EventSourceMessage) => {
        // Only the two usage events are parsed; the many content deltas are skipped unread.
        if (event.event !== "message_start" && event.event !== "message_delta") return;
        const parsed = sseEventSchema.safeParse(safeJson(event.data));
        if (!parsed.success) return;
        if (parsed.data.type === "message_start") {
          state.model = parsed.data.message.model ?? state.model;
          apply(parsed.data.message.usage);
        } else {
          apply(parsed.data.usage);
        }
      },
    });
    return {
      feed: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })),
      result,
    };
  }

  const chunks: Buffer[] = [];
  let size = 0;
  let read = false;
  return {
    feed(chunk) {
      size += chunk.length;
      if (size <= maxJsonBytes) chunks.push(chunk);
    },
    result() {
      if (!read && size <= maxJsonBytes) {
        read = true;
        const parsed = messageSchema.safeParse(safeJson(Buffer.concat(chunks).toString("utf8")));
        if (parsed.success) {
          state.model = parsed.data.model ?? null;
          apply(parsed.data.usage);
        }
        chunks.length = 0;
      }
      return result();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
