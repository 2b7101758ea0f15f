// The scripted Messages API as a web-standard handler: `fetch(Request) → Response`. The HTTP server
// (model-server.ts) only adapts sockets to it, so unit tests call it directly without a port.
import { createHash, randomBytes } from "node:crypto";
import { buildApiError, errorTypeForKind, statusForErrorType, type ApiErrorType } from "./api-error";
import { describeIssues, ZCountTokensRequest, ZMessagesRequest, type MessagesRequest } from "./api-schema";
import { readConversation, summarizeShape } from "./conversation";
import {
  buildMessage,
  buildMidstreamErrorEvents,
  buildStreamEvents,
  encodeSseEvent,
  planReply,
  type ReplyPlan,
  type SseEvent,
} from "./reply-events";
import {
  isErrorStep,
  say,
  type ErrorStep,
  type ResolvedStep,
  type Scenario,
  type StepContext,
  type StepUsage,
  type ToolResultSeen,
} from "./scenario";
import { ErrorLedger, pickStep, selectScenario } from "./select-step";

export interface ScriptedModelOptions {
  /** Scenarios registered at start, in trigger-priority order. */
  scenarios?: readonly Scenario[];
  /** Scenario answering prompts with neither tag nor trigger; without it they get an echo text. */
  fallbackScenario?: string;
  /** Records kept in memory (oldest dropped first). */
  maxRecordedRequests?: number;
}

export type RecordedResponse =
  | { kind: "reply"; blocks: string[]; stopReason: string; usage: StepUsage }
  | { kind: "error"; status: number; errorType: ApiErrorType }
  | { kind: "midstream-error"; errorType: ApiErrorType }
  | { kind: "count-tokens"; inputTokens: number };

/** One request as the model saw it, for test assertions and the demo log. */
/** An image block a request carried. */
export interface ImageSeen {
  mediaType: string;
  bytes: number;
}

/** Every base64 image block of the user messages (the CLI repeats earlier turns' images in later requests). */
function imagesIn(messages: readonly { role: string; content: unknown }[]): ImageSeen[] {
  const seen: ImageSeen[] = [];
  for (const message of messages) {
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const block of message.content as unknown[]) {
      const b = block as { type?: unknown; source?: { type?: unknown; media_type?: unknown; data?: unknown } };
      if (b?.type !== "image" || b.source?.type !== "base64" || typeof b.source.data !== "string") continue;
      seen.push({ mediaType: String(b.source.media_type), bytes: Buffer.from(b.source.data, "base64").byteLength });
    }
  }
  return seen;
}

export interface RecordedRequest {
  seq: number;
  at: number;
  kind: "messages" | "count_tokens";
  path: string;
  model: string;
  stream: boolean;
  maxTokens: number | undefined;
  toolNames: string[];
  messageCount: number;
  /** e.g. `u[text,text] s[text] a[text,tool_use] u[tool_result]`. */
  shape: string;
  /** `x-claude-code-session-id` header: the CLI's session id. */
  sessionId: string | undefined;
  /** `x-stainless-retry-count` header. The CLI retries on its own and sent 0 on its retries too. */
  retryCount: number;
  /** The credential the caller sent (`x-api-key`, or a Bearer token), to check what a proxy forwards. */
  apiKey: string | undefined;
  prompt: string;
  cwd: string | undefined;
  scenario: string | undefined;
  stepIndex: number;
  /** Tool results after the last assistant message: what the model was just shown. */
  toolResults: ToolResultSeen[];
  /** Image blocks in the user messages, in order: the media type and the decoded size of each. */
  images: ImageSeen[];
  response: RecordedResponse;
  /** The request body as received, for assertions on anything not summarised above. */
  body: unknown;
}

export interface Disposable {
  dispose(): void;
}

type Listener = (record: RecordedRequest) => void;

// Side calls (titles, summaries, the set_model probe) carry no tools and get this.
const sideCallText = "OK";
const finalText = "Done.";
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function newId(prefix: string): string {
  const bytes = randomBytes(24);
  let id = "";
  for (const byte of bytes) id += base62[byte % 62];
  return `${prefix}_${id}`;
}

function estimateTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value).length / 4));
}

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** Resolves after `ms`, or at once when the signal aborts; never leaves a timer behind. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * The scripted model: scenarios, the request log, and the handler. Stateless per request except
 * for the error ledger, so a restarted or resumed CLI picks up where its conversation says it is.
 */
export class ScriptedModel {
  private readonly scenarios = new Map<string, Scenario>();
  private readonly records: RecordedRequest[] = [];
  private readonly recordByRequest = new WeakMap<Request, RecordedRequest>();
  private readonly listeners = new Set<Listener>();
  private readonly ledger = new ErrorLedger();
  // Aborted on close(): ends every open stream and pending delay.
  private readonly lifetime = new AbortController();
  private readonly fallbackScenario: string | undefined;
  private readonly maxRecords: number;
  private seq = 0;

  constructor(options: ScriptedModelOptions = {}) {
    for (const scenario of options.scenarios ?? []) this.scenarios.set(scenario.name, scenario);
    this.fallbackScenario = options.fallbackScenario;
    this.maxRecords = options.maxRecordedRequests ?? 500;
  }

  /** Registers (or replaces) a scenario at runtime. */
  addScenario(name: string, steps: Scenario["steps"], extra: Omit<Scenario, "name" | "steps"> = {}): void {
    this.scenarios.set(name, { ...extra, name, steps });
  }

  removeScenario(name: string): void {
    this.scenarios.delete(name);
  }

  scenarioNames(): string[] {
    return [...this.scenarios.keys()];
  }

  /** Every request answered so far, oldest first. */
  get requests(): readonly RecordedRequest[] {
    return this.records;
  }

  /** Forgets recorded requests and served errors, e.g. between tests sharing one server. */
  clearRequests(): void {
    this.records.length = 0;
    this.ledger.clear();
  }

  onDidRecordRequest(listener: Listener): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Resolves with the first recorded request (past or future) matching `predicate`; rejects after `timeoutMs`. */
  waitForRequest(predicate: (record: RecordedRequest) => boolean, timeoutMs = 10_000): Promise<RecordedRequest> {
    const seen = this.records.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const subscription = this.onDidRecordRequest((record) => {
        if (!predicate(record)) return;
        finish();
        resolve(record);
      });
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no matching model request within ${timeoutMs} ms`));
      }, timeoutMs);
      const onClose = () => {
        finish();
        reject(new Error("model server closed"));
      };
      this.lifetime.signal.addEventListener("abort", onClose, { once: true });
      const finish = () => {
        clearTimeout(timer);
        subscription.dispose();
        this.lifetime.signal.removeEventListener("abort", onClose);
      };
    });
  }

  /** The record made for `request`, if it got that far (not for malformed or unrouted requests). */
  recordOf(request: Request): RecordedRequest | undefined {
    return this.recordByRequest.get(request);
  }

  /** Ends open streams and pending delays. */
  close(): void {
    this.lifetime.abort();
    this.listeners.clear();
  }

  /** The HTTP entry point. */
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const requestId = newId("req");
    if (request.method === "GET" && (url.pathname === "/" || url.pathname === "/health")) {
      return jsonResponse(200, { ok: true, scenarios: this.scenarioNames() });
    }
    const route =
      url.pathname === "/v1/messages"
        ? "messages"
        : url.pathname === "/v1/messages/count_tokens"
          ? "count_tokens"
          : undefined;
    if (request.method !== "POST" || route === undefined) {
      return this.errorResponse("not_found_error", requestId, `${request.method} ${url.pathname} is not served here`);
    }
    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      return this.errorResponse("invalid_request_error", requestId, "Request body is not valid JSON");
    }
    return route === "messages"
      ? this.answerMessages(body, request, url.pathname, requestId)
      : this.answerCountTokens(body, request, url.pathname, requestId);
  }

  private errorResponse(
    type: ApiErrorType,
    requestId: string,
    message?: string,
    headers: Record<string, string> = {},
  ): Response {
    return jsonResponse(statusForErrorType[type], buildApiError(type, requestId, message), {
      "request-id": requestId,
      ...headers,
    });
  }

  private answerCountTokens(body: unknown, request: Request, path: string, requestId: string): Response {
    const parsed = ZCountTokensRequest.safeParse(body);
    if (!parsed.success) return this.errorResponse("invalid_request_error", requestId, describeIssues(parsed.error));
    const { messages, system, tools } = parsed.data;
    const inputTokens = estimateTokens({ messages, system, tools });
    this.record(request, {
      kind: "count_tokens",
      path,
      model: parsed.data.model,
      stream: false,
      maxTokens: undefined,
      toolNames: (tools ?? []).map((tool) => tool.name),
      messageCount: messages.length,
      shape: summarizeShape(messages),
      ...this.headerFacts(request),
      prompt: "",
      cwd: undefined,
      scenario: undefined,
      stepIndex: 0,
      toolResults: [],
      images: [],
      response: { kind: "count-tokens", inputTokens },
      body,
    });
    return jsonResponse(200, { input_tokens: inputTokens }, { "request-id": requestId });
  }

  private headerFacts(request: Request): { sessionId: string | undefined; retryCount: number; apiKey: string | undefined } {
    const bearer = /^Bearer (.+)$/i.exec(request.headers.get("authorization") ?? "")?.[1];
    return {
      sessionId: request.headers.get("x-claude-code-session-id") ?? undefined,
      retryCount: Number(request.headers.get("x-stainless-retry-count") ?? "0") || 0,
      apiKey: request.headers.get("x-api-key") ?? bearer,
    };
  }

  private chooseStep(
    request: MessagesRequest,
    ctx: StepContext,
    conversationKey: string,
  ): { scenario: string | undefined; step: ResolvedStep } {
    if ((request.tools?.length ?? 0) === 0) return { scenario: undefined, step: say(sideCallText) };
    const choice = selectScenario(ctx.prompt, this.scenarios, this.fallbackScenario);
    switch (choice.kind) {
      case "unknown-tag":
        return {
          scenario: choice.name,
          step: say(
            `Unknown scenario "${choice.name}". Known scenarios: ${this.scenarioNames().join(", ") || "none"}.`,
          ),
        };
      case "none":
        return {
          scenario: undefined,
          step: say(ctx.prompt === "" ? finalText : `You said: ${ctx.prompt.slice(0, 200)}`),
        };
      case "scenario": {
        const scenarioCtx = { ...ctx, scenario: choice.scenario.name };
        const picked = pickStep(choice.scenario, scenarioCtx, conversationKey, this.ledger);
        return { scenario: choice.scenario.name, step: picked.step ?? say(finalText) };
      }
    }
  }

  private async answerMessages(body: unknown, request: Request, path: string, requestId: string): Promise<Response> {
    const parsed = ZMessagesRequest.safeParse(body);
    if (!parsed.success) return this.errorResponse("invalid_request_error", requestId, describeIssues(parsed.error));
    const data = parsed.data;
    const view = readConversation(data);
    const headerFacts = this.headerFacts(request);
    const ctx: StepContext = {
      scenario: "",
      stepIndex: view.stepIndex,
      prompt: view.prompt,
      cwd: view.cwd,
      lastToolResults: view.lastToolResults,
      toolUsesSincePrompt: view.toolUsesSincePrompt,
      toolResultsSincePrompt: view.toolResultsSincePrompt,
      model: data.model,
      request: data,
    };
    // Same session, same prompt, same call: the identity of "this model call" across the CLI's retries.
    // Hashed, since a prompt can be megabytes long.
    const conversationKey = createHash("sha256")
      .update(JSON.stringify([headerFacts.sessionId ?? "", view.promptIndex, view.prompt, view.stepIndex]))
      .digest("base64url");
    const { scenario, step } = this.chooseStep(data, ctx, conversationKey);
    const stream = data.stream === true;
    const recordBase = {
      kind: "messages" as const,
      path,
      model: data.model,
      stream,
      maxTokens: data.max_tokens,
      toolNames: (data.tools ?? []).map((tool) => tool.name),
      messageCount: data.messages.length,
      shape: summarizeShape(data.messages),
      ...headerFacts,
      prompt: view.prompt,
      cwd: view.cwd,
      scenario,
      stepIndex: view.stepIndex,
      toolResults: view.lastToolResults,
      images: imagesIn(data.messages),
      body,
    };
    if (isErrorStep(step)) return this.answerError(step, request, data, ctx, requestId, recordBase);

    const reply = planReply(step, {
      model: data.model,
      cwd: view.cwd,
      inputTokens: estimateTokens({ messages: data.messages, system: data.system, tools: data.tools }),
      newId: (prefix) => newId(prefix),
    });
    this.record(request, {
      ...recordBase,
      response: {
        kind: "reply",
        blocks: [...(reply.text !== undefined ? ["text"] : []), ...reply.tools.map((tool) => `tool_use:${tool.name}`)],
        stopReason: reply.stopReason,
        usage: reply.usage,
      },
    });
    // Recorded before the delay, so a test can see that a stalled call has arrived.
    const signal = AbortSignal.any([request.signal, this.lifetime.signal]);
    if (step.delayMs !== undefined) await sleep(step.delayMs, signal);
    if (!stream) return jsonResponse(200, buildMessage(reply), { "request-id": requestId });
    return this.streamResponse(buildStreamEvents(reply), requestId, signal);
  }

  private answerError(
    step: ErrorStep,
    request: Request,
    data: MessagesRequest,
    ctx: StepContext,
    requestId: string,
    recordBase: Omit<RecordedRequest, "seq" | "at" | "response">,
  ): Response {
    const errorType = errorTypeForKind[step.error];
    if (step.error === "midstream" && data.stream === true) {
      const reply: ReplyPlan = planReply(
        // Zero usage: the CLI adds an abandoned stream's message_start figures to the turn's usage, and
        // cost tests must not see tokens from a call that never completed.
        { text: step.partialText ?? "Let me think about th", usage: { input_tokens: 0, output_tokens: 0 } },
        { model: data.model, cwd: ctx.cwd, inputTokens: 0, newId: (prefix) => newId(prefix) },
      );
      this.record(request, { ...recordBase, response: { kind: "midstream-error", errorType } });
      return this.streamResponse(
        buildMidstreamErrorEvents(reply, errorType, requestId, step.message),
        requestId,
        AbortSignal.any([request.signal, this.lifetime.signal]),
      );
    }
    const status = statusForErrorType[errorType];
    this.record(request, { ...recordBase, response: { kind: "error", status, errorType } });
    const headers: Record<string, string> =
      step.error === "rate_limit" || step.retryAfterSeconds !== undefined
        ? { "retry-after": String(step.retryAfterSeconds ?? 1) }
        : {};
    return this.errorResponse(errorType, requestId, step.message, headers);
  }

  private streamResponse(events: readonly SseEvent[], requestId: string, signal: AbortSignal): Response {
    const encoder = new TextEncoder();
    const cancelled = new AbortController();
    const done = AbortSignal.any([signal, cancelled.signal]);
    let next = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const event = events[next++];
        if (event === undefined || done.aborted) {
          controller.close();
          return;
        }
        if (event.delayMs) await sleep(event.delayMs, done);
        // A cancelled reader has released the controller; enqueueing would throw.
        if (cancelled.signal.aborted) return;
        if (done.aborted) {
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(encodeSseEvent(event)));
      },
      cancel() {
        cancelled.abort();
      },
    });
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "request-id": requestId,
      },
    });
  }

  private record(request: Request, entry: Omit<RecordedRequest, "seq" | "at">): void {
    const record: RecordedRequest = { ...entry, seq: ++this.seq, at: Date.now() };
    this.records.push(record);
    this.recordByRequest.set(request, record);
    if (this.records.length > this.maxRecords) this.records.splice(0, this.records.length - this.maxRecords);
    for (const listener of this.listeners) listener(record);
  }
}
