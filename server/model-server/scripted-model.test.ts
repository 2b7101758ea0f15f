import { createParser } from "eventsource-parser";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "./api-schema";
import { callTool, callTools, fail, say, type Scenario } from "./scenario";
import { ScriptedModel } from "./scripted-model";

interface ParsedEvent {
  event: string;
  data: Record<string, unknown> & { type: string };
}

const cwd = "/srv/ws";
const tools = [{ name: "Bash", input_schema: { type: "object" } }];
const environment: Message = {
  role: "system",
  content: [{ type: "text", text: `# Environment\n - Primary working directory: ${cwd}\n - Platform: linux` }],
};

function userText(text: string): Message {
  return {
    role: "user",
    content: [
      { type: "text", text: "<system-reminder>\nbe nice\n</system-reminder>\n" },
      { type: "text", text },
    ],
  };
}

function requestBody(messages: Message[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "claude-opus-5-5",
    max_tokens: 32_000,
    stream: true,
    tools,
    system: [{ type: "text", text: "You are a test." }],
    messages,
    ...extra,
  };
}

function prompt(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return requestBody([userText(text), environment], extra);
}

function post(
  model: ScriptedModel,
  body: unknown,
  path = "/v1/messages?beta=true",
  headers: Record<string, string> = {},
): Promise<Response> {
  return model.fetch(
    new Request(`http://model.test${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    }),
  );
}

async function readEvents(response: Response): Promise<ParsedEvent[]> {
  const events: ParsedEvent[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const data = JSON.parse(message.data) as ParsedEvent["data"];
      // The SSE event name must agree with the payload's type, as in the real API.
      expect(message.event).toBe(data.type);
      events.push({ event: message.event ?? "message", data });
    },
  });
  parser.feed(await response.text());
  return events;
}

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

/** Folds the deltas back into content blocks, the way an SDK client does. */
function reassemble(events: ParsedEvent[]): Block[] {
  const blocks: Block[] = [];
  const json: string[] = [];
  for (const { data } of events) {
    const index = data.index as number;
    if (data.type === "content_block_start") {
      blocks[index] = { ...(data.content_block as Block) };
      json[index] = "";
    } else if (data.type === "content_block_delta") {
      const delta = data.delta as { type: string; text?: string; partial_json?: string };
      const block = blocks[index]!;
      if (delta.type === "text_delta") block.text = (block.text ?? "") + delta.text;
      else json[index] += delta.partial_json ?? "";
    } else if (data.type === "content_block_stop" && blocks[index]!.type === "tool_use") {
      blocks[index]!.input = JSON.parse(json[index]!);
    }
  }
  return blocks;
}

let model: ScriptedModel;

function withScenarios(...scenarios: Scenario[]): ScriptedModel {
  model = new ScriptedModel({ scenarios });
  return model;
}

afterEach(() => model?.close());

describe("streaming replies", () => {
  it("streams a text step with the real API's event sequence", async () => {
    withScenarios({ name: "hi", steps: [say("Hello there, this is a scripted answer.")] });
    const response = await post(model, prompt("[scenario:hi] go"));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const events = await readEvents(response);
    const names = events.map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(["message_start", "ping", "content_block_start"]);
    expect(names.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(names.filter((name) => name === "content_block_delta").length).toBeGreaterThan(1);
    expect(reassemble(events)).toEqual([{ type: "text", text: "Hello there, this is a scripted answer." }]);
    const delta = events.find((event) => event.event === "message_delta")!.data;
    expect(delta.delta).toEqual({ stop_reason: "end_turn", stop_sequence: null });
    const start = events[0]!.data.message as Record<string, unknown>;
    expect(start).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      content: [],
      stop_reason: null,
    });
    expect(String(start.id)).toMatch(/^msg_/);
  });

  it("streams a tool_use whose input_json_delta pieces reassemble to the input, paths made absolute", async () => {
    const input = { file_path: "notes/todo.md", old_string: 'a "quoted" line\n', new_string: "b" };
    withScenarios({ name: "edit", steps: [callTool("Edit", input)] });
    const events = await readEvents(await post(model, prompt("[scenario:edit]")));
    const blocks = reassemble(events);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({
      type: "tool_use",
      name: "Edit",
      input: { ...input, file_path: `${cwd}/notes/todo.md` },
    });
    expect(blocks[0]!.id).toMatch(/^toolu_/);
    const start = events.find((event) => event.event === "content_block_start")!.data;
    expect(start.content_block).toMatchObject({ type: "tool_use", input: {} });
    const pieces = events.filter(
      (event) => (event.data.delta as { type?: string } | undefined)?.type === "input_json_delta",
    );
    expect(pieces.length).toBeGreaterThan(2);
    expect(events.find((event) => event.event === "message_delta")!.data.delta).toMatchObject({
      stop_reason: "tool_use",
    });
  });

  it("streams text and several tool_uses in one message, indexed in order", async () => {
    withScenarios({
      name: "multi",
      steps: [
        callTools(
          [
            { name: "Write", input: { file_path: "/abs/a.txt", content: "A" }, id: "toolu_fixed_1" },
            { name: "Bash", input: { command: "echo hi", description: "say hi" } },
            { name: "ExitPlanMode", input: {} },
          ],
          { text: "Three things." },
        ),
      ],
    });
    const events = await readEvents(await post(model, prompt("[scenario:multi]")));
    const blocks = reassemble(events);
    expect(blocks.map((block) => block.type)).toEqual(["text", "tool_use", "tool_use", "tool_use"]);
    expect(blocks[1]).toEqual({
      type: "tool_use",
      id: "toolu_fixed_1",
      name: "Write",
      input: { file_path: "/abs/a.txt", content: "A" },
    });
    expect(blocks[2]).toMatchObject({ name: "Bash", input: { command: "echo hi", description: "say hi" } });
    expect(blocks[3]).toMatchObject({ name: "ExitPlanMode", input: {} });
    const starts = events.filter((event) => event.event === "content_block_start").map((event) => event.data.index);
    expect(starts).toEqual([0, 1, 2, 3]);
  });

  it("reports the step's usage figures in message_start and message_delta", async () => {
    const usage = {
      input_tokens: 1000,
      output_tokens: 2000,
      cache_read_input_tokens: 3000,
      cache_creation_input_tokens: 4000,
    };
    withScenarios({ name: "cost", steps: [say("priced", { usage })] });
    const events = await readEvents(await post(model, prompt("[scenario:cost]")));
    const start = events[0]!.data.message as { usage: Record<string, number> };
    expect(start.usage).toEqual({ ...usage, output_tokens: 1 });
    expect(events.find((event) => event.event === "message_delta")!.data.usage).toEqual(usage);
  });

  it("keeps explicit chunks and waits between them", async () => {
    withScenarios({ name: "slow", steps: [{ chunks: ["one ", "two ", "three"], chunkDelayMs: 40 }] });
    const started = Date.now();
    const events = await readEvents(await post(model, prompt("[scenario:slow]")));
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    const texts = events
      .filter((event) => event.event === "content_block_delta")
      .map((event) => (event.data.delta as { text: string }).text);
    expect(texts).toEqual(["one ", "two ", "three"]);
  });
});

describe("non-streaming replies and count_tokens", () => {
  it("answers stream:false with one message object", async () => {
    withScenarios({
      name: "both",
      steps: [
        callTool(
          "Read",
          { file_path: "README.md" },
          { text: "Reading.", usage: { input_tokens: 5, output_tokens: 7 } },
        ),
      ],
    });
    const response = await post(model, prompt("[scenario:both]", { stream: false }));
    expect(response.headers.get("content-type")).toContain("application/json");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-opus-5-5",
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(body.content).toEqual([
      { type: "text", text: "Reading." },
      {
        type: "tool_use",
        id: expect.stringMatching(/^toolu_/),
        name: "Read",
        input: { file_path: `${cwd}/README.md` },
      },
    ]);
  });

  it("counts tokens", async () => {
    withScenarios();
    const response = await post(
      model,
      { model: "claude-opus-5-5", messages: [userText("count me")] },
      "/v1/messages/count_tokens?beta=true",
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { input_tokens: number };
    expect(body.input_tokens).toBeGreaterThan(0);
    expect(model.requests.at(-1)).toMatchObject({
      kind: "count_tokens",
      response: { kind: "count-tokens", inputTokens: body.input_tokens },
    });
  });
});

describe("errors", () => {
  it("answers 429 with retry-after once, then the reply to the retried request", async () => {
    withScenarios({ name: "rl", steps: [fail("rate_limit", { retryAfterSeconds: 3 }), say("after the limit")] });
    const first = await post(model, prompt("[scenario:rl]"), undefined, { "x-claude-code-session-id": "s1" });
    expect(first.status).toBe(429);
    expect(first.headers.get("retry-after")).toBe("3");
    const body = (await first.json()) as Record<string, unknown>;
    expect(body).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: expect.any(String) },
      request_id: expect.stringMatching(/^req_/),
    });
    expect(first.headers.get("request-id")).toBe(body.request_id);
    const retry = await post(model, prompt("[scenario:rl]"), undefined, { "x-claude-code-session-id": "s1" });
    expect(reassemble(await readEvents(retry))).toEqual([{ type: "text", text: "after the limit" }]);
  });

  it.each([
    ["server", 500, "api_error"],
    ["overloaded", 529, "overloaded_error"],
    ["invalid_request", 400, "invalid_request_error"],
    ["authentication", 401, "authentication_error"],
  ] as const)("answers a %s step with %i %s", async (kind, status, type) => {
    withScenarios({ name: "err", steps: [fail(kind, { message: "scripted failure" }), say("recovered")] });
    const response = await post(model, prompt("[scenario:err]"));
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ type: "error", error: { type, message: "scripted failure" } });
    expect(response.headers.get("retry-after")).toBeNull();
  });

  it("fails `times` times, and forever with Infinity", async () => {
    withScenarios(
      { name: "twice", steps: [fail("server", { times: 2 }), say("third time lucky")] },
      { name: "never", steps: [fail("overloaded", { times: Infinity })] },
    );
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(model, prompt("[scenario:twice]"))).status);
    expect(statuses).toEqual([500, 500, 200]);
    for (let i = 0; i < 5; i++) expect((await post(model, prompt("[scenario:never]"))).status).toBe(529);
  });

  it("breaks a stream off with an SSE error event, then serves the non-streaming retry", async () => {
    withScenarios({ name: "mid", steps: [fail("midstream", { partialText: "Half an ans" }), say("Whole answer")] });
    const events = await readEvents(await post(model, prompt("[scenario:mid]")));
    expect(events.at(-1)!.data).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(events.some((event) => event.event === "message_stop")).toBe(false);
    expect(reassemble(events)[0]).toMatchObject({ type: "text", text: "Half an ans" });
    const retry = await post(model, prompt("[scenario:mid]", { stream: false, max_tokens: 64_000 }));
    expect(await retry.json()).toMatchObject({ content: [{ type: "text", text: "Whole answer" }] });
    expect(model.requests.map((record) => record.response.kind)).toEqual(["midstream-error", "reply"]);
  });

  it("keys served errors by session, so another CLI session fails again", async () => {
    withScenarios({ name: "rl", steps: [fail("rate_limit"), say("ok")] });
    expect((await post(model, prompt("[scenario:rl]"), undefined, { "x-claude-code-session-id": "a" })).status).toBe(
      429,
    );
    expect((await post(model, prompt("[scenario:rl]"), undefined, { "x-claude-code-session-id": "b" })).status).toBe(
      429,
    );
    expect((await post(model, prompt("[scenario:rl]"), undefined, { "x-claude-code-session-id": "a" })).status).toBe(
      200,
    );
  });
});

describe("step selection", () => {
  const history = (promptText: string, toolResult: string): Message[] => [
    userText(promptText),
    environment,
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "cat x" } }] },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: toolResult }] }],
    },
  ];

  it("takes the step index from the assistant messages after the prompt, and shows dynamic steps the tool results", async () => {
    withScenarios({
      name: "echo",
      steps: [
        callTool("Bash", { command: "cat x" }),
        (ctx) => say(`step ${ctx.stepIndex} saw: ${ctx.lastToolResults[0]?.text}`),
      ],
    });
    const response = await post(model, requestBody(history("[scenario:echo]", "file contents")));
    expect(reassemble(await readEvents(response))).toEqual([{ type: "text", text: "step 1 saw: file contents" }]);
    expect(model.requests.at(-1)).toMatchObject({
      scenario: "echo",
      stepIndex: 1,
      cwd,
      prompt: "[scenario:echo]",
      toolResults: [{ toolUseId: "toolu_1", isError: false, text: "file contents" }],
      shape: "u[text,text] s[text] a[tool_use] u[tool_result]",
    });
  });

  it("uses the latest prompt: an earlier turn's tag does not leak into the next", async () => {
    withScenarios({ name: "a", steps: [say("from a")] }, { name: "b", steps: [say("from b"), say("b again")] });
    const messages = [
      ...history("[scenario:a]", "x"),
      { role: "assistant", content: "from a" } as Message,
      userText("[scenario:b]"),
    ];
    expect(reassemble(await readEvents(await post(model, requestBody(messages))))).toEqual([
      { type: "text", text: "from b" },
    ]);
  });

  it("answers with a short final text once the scenario has run out of steps", async () => {
    withScenarios({ name: "one", steps: [callTool("Bash", { command: "true" })] });
    const blocks = reassemble(await readEvents(await post(model, requestBody(history("[scenario:one]", "")))));
    expect(blocks).toEqual([{ type: "text", text: "Done." }]);
  });

  it("names the known scenarios when a tag is unknown", async () => {
    withScenarios({ name: "known", steps: [] });
    const blocks = reassemble(await readEvents(await post(model, prompt("[scenario:nope]"))));
    expect(blocks[0]!.text).toContain('Unknown scenario "nope"');
    expect(blocks[0]!.text).toContain("known");
  });

  it("picks by trigger word, then the fallback, then echoes", async () => {
    model = new ScriptedModel({
      scenarios: [
        { name: "greet", triggers: ["hello"], steps: [say("greeting")] },
        { name: "tour", steps: [say("touring")] },
      ],
      fallbackScenario: "tour",
    });
    const text = async (p: string) => reassemble(await readEvents(await post(model, prompt(p))))[0]!.text;
    expect(await text("Hello, world")).toBe("greeting");
    expect(await text("othello")).toBe("touring");
    const plain = new ScriptedModel();
    expect(reassemble(await readEvents(await post(plain, prompt("just chatting"))))[0]!.text).toBe(
      "You said: just chatting",
    );
    plain.close();
  });

  it("answers requests without tools (titles, the set_model probe) with a short text", async () => {
    withScenarios({ name: "t", steps: [callTool("Bash", { command: "rm -rf /" })] });
    const response = await post(model, prompt("[scenario:t]", { tools: undefined, stream: false, max_tokens: 1 }));
    expect(await response.json()).toMatchObject({ content: [{ type: "text", text: "OK" }], stop_reason: "end_turn" });
    expect(model.requests.at(-1)!.scenario).toBeUndefined();
  });

  it("registers scenarios at runtime", async () => {
    withScenarios();
    model.addScenario("late", [say("added later")]);
    expect(reassemble(await readEvents(await post(model, prompt("[scenario:late]"))))[0]!.text).toBe("added later");
  });
});

describe("request validation", () => {
  it.each([
    ["a missing model", { messages: [userText("x")], max_tokens: 10 }, "model"],
    ["empty messages", { model: "m", messages: [], max_tokens: 10 }, "messages"],
    ["a bad role", { model: "m", messages: [{ role: "robot", content: "x" }], max_tokens: 10 }, "messages.0.role"],
    ["a missing max_tokens", { model: "m", messages: [userText("x")] }, "max_tokens"],
  ])("rejects %s with invalid_request_error", async (_label, body, field) => {
    withScenarios();
    const response = await post(model, body);
    expect(response.status).toBe(400);
    const json = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(json.type).toBe("error");
    expect(json.error.type).toBe("invalid_request_error");
    expect(json.error.message).toContain(field);
  });

  it("rejects invalid JSON and unknown routes", async () => {
    withScenarios();
    const bad = await post(model, "{not json");
    expect(bad.status).toBe(400);
    const missing = await post(model, {}, "/v1/complete");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(model.requests).toHaveLength(0);
  });
});

describe("records and lifecycle", () => {
  it("records requests, notifies waiters and forgets on clearRequests", async () => {
    withScenarios({ name: "rl", steps: [fail("rate_limit"), say("ok")] });
    const waiting = model.waitForRequest((record) => record.response.kind === "reply");
    await post(model, prompt("[scenario:rl]"));
    await post(model, prompt("[scenario:rl]"));
    const reply = await waiting;
    expect(reply).toMatchObject({
      seq: 2,
      model: "claude-opus-5-5",
      stream: true,
      maxTokens: 32_000,
      toolNames: ["Bash"],
    });
    model.clearRequests();
    expect(model.requests).toHaveLength(0);
    // The served error was forgotten too: the scenario fails again.
    expect((await post(model, prompt("[scenario:rl]"))).status).toBe(429);
  });

  it("ends an open slow stream on close()", async () => {
    withScenarios({ name: "slow", steps: [say("a b c d e f g h i j k l m n o p", { chunkDelayMs: 5_000 })] });
    const response = await post(model, prompt("[scenario:slow]"));
    const reading = response.text();
    await new Promise((resolve) => setTimeout(resolve, 20));
    model.close();
    const text = await reading;
    expect(text).toContain("message_start");
    expect(text).not.toContain("message_stop");
  });

  it("rejects pending waiters on close()", async () => {
    withScenarios();
    const waiting = model.waitForRequest(() => true, 5_000);
    model.close();
    await expect(waiting).rejects.toThrow("closed");
  });
});
