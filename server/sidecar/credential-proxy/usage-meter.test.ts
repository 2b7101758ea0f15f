import { describe, expect, it } from "vitest";
import { meterAnswer, priceOf, ratesOf } from "./usage-meter";

const sse = (events: [string, unknown][]) => events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");

// As the Messages API streams it: the prompt's figures in message_start, the final output in message_delta.
const stream = sse([
  ["message_start", { type: "message_start", message: { id: "msg_1", model: "claude-opus-5-5", usage: { input_tokens: 1000, output_tokens: 1, cache_read_input_tokens: 3000, cache_creation_input_tokens: 4000 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "héllo — “usage” message_delta" } }],
  ["ping", { type: "ping" }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2000 } }],
  ["message_stop", { type: "message_stop" }],
]);

describe("the usage meter", () => {
  it("reads an SSE answer's usage from message_start and message_delta, whatever the chunking", () => {
    const bytes = Buffer.from(stream);
    for (const size of [1, 7, 64, bytes.length]) {
      const meter = meterAnswer("text/event-stream; charset=utf-8");
      for (let i = 0; i < bytes.length; i += size) meter.feed(bytes.subarray(i, i + size));
      // 1000/2000/3000/4000 at the default model's rates: $0.0646, as the CLI prices it.
      expect(meter.result()).toEqual({ model: "claude-opus-5-5", inputTokens: 1000, outputTokens: 2000, cacheReadTokens: 3000, cacheWriteTokens: 4000, webSearches: 0, usd: 0.0646 });
    }
  });

  it("meters a stream cut off after message_start with what it saw", () => {
    const meter = meterAnswer("text/event-stream");
    meter.feed(Buffer.from(stream.slice(0, stream.indexOf("event: content_block_delta"))));
    expect(meter.result()).toMatchObject({ inputTokens: 1000, outputTokens: 1, cacheReadTokens: 3000 });
  });

  it("takes later cumulative figures of message_delta over earlier ones, and web searches", () => {
    const meter = meterAnswer("text/event-stream");
    meter.feed(
      Buffer.from(
        sse([
          ["message_start", { type: "message_start", message: { model: "claude-sonnet-4-5-20250929", usage: { input_tokens: 10, output_tokens: 1 } } }],
          ["message_delta", { type: "message_delta", usage: { input_tokens: 12, output_tokens: 50, server_tool_use: { web_search_requests: 2 } } }],
          ["message_delta", { type: "message_delta", usage: { output_tokens: "bogus" } }],
        ]),
      ),
    );
    expect(meter.result()).toEqual({ model: "claude-sonnet-4-5-20250929", inputTokens: 12, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 2, usd: 0.020786 });
  });

  it("reads a JSON answer's usage at its end", () => {
    const body = JSON.stringify({ id: "msg_2", type: "message", model: "claude-haiku-4-5", content: [{ type: "text", text: "ok" }], usage: { input_tokens: 100000, output_tokens: 10000 } });
    const meter = meterAnswer("application/json");
    meter.feed(Buffer.from(body.slice(0, 20)));
    meter.feed(Buffer.from(body.slice(20)));
    expect(meter.result()).toMatchObject({ model: "claude-haiku-4-5", inputTokens: 100000, outputTokens: 10000, usd: 0.15 });
    expect(meter.result().usd).toBe(0.15); // idempotent
  });

  it("meters nothing from a body that is not a message", () => {
    const meter = meterAnswer(undefined);
    meter.feed(Buffer.from("<html>gateway</html>"));
    expect(meter.result()).toMatchObject({ model: null, usd: 0 });
  });

  it("prices by family, unknown names at the default model's rates", () => {
    expect(ratesOf("claude-haiku-4-5")).toEqual({ input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 });
    expect(ratesOf("my-custom-model")).toEqual(ratesOf("claude-opus-5-5"));
    expect(priceOf(null, { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, webSearches: 0 })).toBe(4);
  });
});
