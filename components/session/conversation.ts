/**
 * Turns a session's event log into what the conversation view shows. Pure, so the same log
 * always gives the same view: a reload, a second viewer and a live stream agree.
 *
 * The CLI's frames are read loosely (protocol reference §3–§4): fields are optional, unknown
 * types are skipped (the raw tab still shows them), and nothing here throws on odd input.
 */
import type { WireEvent } from "@/server/shared/wire/session";
import { describeChangeEvent } from "@/components/changes/change-notices";

type Json = Record<string, unknown>;

export interface ToolResultView {
  seq: number;
  text: string;
  isError: boolean;
  /** The tool's structured output (`tool_use_result`), when the CLI gave one. */
  structured?: unknown;
  trimmed: boolean;
}

export interface ApprovalView {
  requestId: string;
  toolName: string;
  input: unknown;
}

export type ConversationItem =
  | {
      kind: "user";
      key: string;
      seq: number;
      text: string;
      author: string;
      /** The sender's user id (absent in logs without one). */
      authorId?: string;
      at: string;
      /** Images pasted into the prompt (served by the session's image route). */
      images?: { id: string; mediaType: string; name?: string }[];
      /** Sent from this page and not logged yet (seq -1): `pending-prompts.ts`. */
      pending?: { imageCount: number };
      /**
       * Sent while a turn ran, and the CLI holds it in its queue: drawn after the turn still
       * running; once the CLI takes it in, the item moves to where that happened.
       */
      queued?: true;
    }
  | {
      kind: "assistant";
      key: string;
      seq: number;
      text: string;
      aborted: boolean;
      subagent: boolean;
      /** The tool call (Agent/Task) whose subagent wrote this. */
      parentToolUseId?: string;
    }
  | { kind: "thinking"; key: string; seq: number; text: string }
  | {
      kind: "tool";
      key: string;
      seq: number;
      id: string;
      name: string;
      input: unknown;
      result?: ToolResultView;
      approval?: ApprovalView;
      subagent: boolean;
      /** The tool call (Agent/Task) whose subagent made this call. */
      parentToolUseId?: string;
      /** The CLI's task for this call (a subagent, a background or long command): running until it ends. */
      task?: { id: string; status: string; backgrounded: boolean };
    }
  | { kind: "approval"; key: string; seq: number; approval: ApprovalView }
  | {
      kind: "notice";
      key: string;
      seq: number;
      tone: "info" | "warning" | "error";
      text: string;
      detail?: string;
      at?: string;
    }
  | {
      kind: "turn-end";
      key: string;
      seq: number;
      isError: boolean;
      interrupted: boolean;
      text: string;
      durationMs?: number;
      costUsd?: number;
    }
  | { kind: "trimmed"; key: string; seq: number; label: string };

/** Text still streaming (from `stream_event` deltas); replaced by the final assistant block. */
export interface PartialText {
  key: string;
  messageId: string | undefined;
  index: number;
  text: string;
}

export interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface Conversation {
  items: ConversationItem[];
  partials: PartialText[];
  /** The permission mode the CLI last reported or a switch confirmed, and the seq where it became that. */
  mode?: { value: string; seq: number };
  model?: string;
  /** Cost and tokens summed over the turns' results. */
  costUsd: number;
  tokens: Tokens;
  turns: number;
  /** The first prompt's text, a title for sessions that have none. */
  firstPrompt?: string;
  /** The background tasks the CLI last listed (`system/background_tasks_changed`, replace semantics). */
  backgroundTasks: unknown[];
  /** A title the CLI confirmed (`system/session_title_changed`). */
  title?: string;
  /** Why the session ended for good (the sidecar's `dead` notice), when it did. */
  endedReason?: string;
}

const interruptMarker = /^\[Request interrupted by user( for tool use)?\]$/;

/** Builds the conversation from a log in seq order. */
export function buildConversation(events: readonly WireEvent[]): Conversation {
  const builder = createConversationBuilder();
  builder.add(events);
  return builder.view();
}

/**
 * The fold behind `buildConversation`, one event at a time: `add` folds events that follow the
 * ones already added, `view` gives the conversation so far. Items are never changed once a view
 * has shown them: a tool call that gets its result, approval or task is replaced by a new object,
 * so a view's items stay as they were and memoized rows of unchanged items skip their render.
 * `view` keeps the identity of `items` (and of the other parts) while only streamed text changed,
 * so a text delta costs the fold of one event, not a pass over the whole log.
 */
export interface ConversationBuilder {
  add(events: readonly WireEvent[]): void;
  view(): Conversation;
}

type ToolItem = Extract<ConversationItem, { kind: "tool" }>;

export function createConversationBuilder(): ConversationBuilder {
  const items: ConversationItem[] = [];
  /** `items` changed since the last view (a new array then, else the last view's). */
  let itemsChanged = true;
  let itemsView: ConversationItem[] = [];
  let changed = true;
  let cached: Conversation | undefined;
  let firstPrompt: string | undefined;
  const pushItem = (item: ConversationItem) => {
    items.push(item);
    itemsChanged = true;
    if (firstPrompt === undefined && item.kind === "user") firstPrompt = item.text;
  };
  /** Puts `next` where the tool call `old` is (the newest copy: calls being answered are near the end). */
  const replaceTool = (old: ToolItem, next: ToolItem) => {
    const at = items.lastIndexOf(old);
    if (at >= 0) items[at] = next;
    tools.set(next.id, next);
    itemsChanged = true;
  };
  const tools = new Map<string, ToolItem>();
  const approvals = new Map<
    string,
    { approval: ApprovalView; toolUseId?: string; item?: Extract<ConversationItem, { kind: "approval" }> }
  >();
  let partials: PartialText[] = [];
  let streamMessageId: string | undefined;
  let mode: Conversation["mode"];
  let model: string | undefined;
  let costUsd = 0;
  let lastTotalCost = 0;
  let tokens: Tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  let turns = 0;
  let backgroundTasks: unknown[] = [];
  let title: string | undefined;
  let endedReason: string | undefined;
  const taskTools = new Map<string, string>();
  let sawInit = false;
  let stderrTail: string[] = [];
  /** The API error text already shown in this turn, so the result does not repeat it. */
  let apiErrorShown: string | undefined;
  /** Prompt texts by seq (a rewind names the prompt it went back before). */
  const promptTexts = new Map<number, string>();
  /** A turn is running: a prompt logged now waits in the CLI's queue. */
  let turnOpen = false;
  /** The prompts waiting behind the running turn, by the prompt's uuid. */
  const queuedPrompts = new Map<string, Extract<ConversationItem, { kind: "user" }>>();
  /** The CLI says when it queues and starts prompts (older CLIs do not). */
  let sawLifecycle = false;
  /**
   * A queued prompt's item leaves the queue: it moves to where that happened (the CLI took it
   * in, cancelled it, or lost it with its process), so it is never drawn above an answer that
   * came before.
   */
  const unqueue = (uuid: string) => {
    const item = queuedPrompts.get(uuid);
    if (!item) return;
    queuedPrompts.delete(uuid);
    const at = items.lastIndexOf(item);
    if (at < 0) return;
    const { queued: _queued, ...rest } = item;
    void _queued;
    items.splice(at, 1);
    items.push(rest);
    itemsChanged = true;
  };

  const notice = (e: WireEvent, tone: "info" | "warning" | "error", text: string, detail?: string, suffix = "") =>
    pushItem({ kind: "notice", key: `${e.seq}${suffix}`, seq: e.seq, tone, text, detail, at: e.at });

  const settleApproval = (requestId: string) => {
    const pending = approvals.get(requestId);
    if (!pending) return;
    approvals.delete(requestId);
    if (pending.toolUseId) {
      const tool = tools.get(pending.toolUseId);
      if (tool?.approval) replaceTool(tool, { ...tool, approval: undefined });
    }
    if (pending.item) {
      const at = items.lastIndexOf(pending.item);
      if (at >= 0) {
        items.splice(at, 1);
        itemsChanged = true;
      }
    }
  };

  const addOne = (e: WireEvent) => {
    const p = asObject(e.payload);
    const by = e.user?.name ?? "Someone";
    switch (e.kind) {
      case "prompt": {
        const text = str(p?.text) ?? (typeof e.payload === "string" ? e.payload : "");
        const images = promptImagesOf(p?.images);
        const uuid = str(p?.uuid);
        const behind = turnOpen && uuid !== undefined;
        const item: Extract<ConversationItem, { kind: "user" }> = {
          kind: "user",
          key: String(e.seq),
          seq: e.seq,
          text,
          author: by,
          ...(e.user ? { authorId: e.user.id } : {}),
          at: e.at,
          ...(images ? { images } : {}),
          ...(behind ? { queued: true as const } : {}),
        };
        pushItem(item);
        if (behind) queuedPrompts.set(uuid, item);
        promptTexts.set(e.seq, text);
        turnOpen = true;
        break;
      }
      case "interrupt":
        notice(e, "info", `${by} pressed Stop.`);
        break;
      case "changes":
      case "revert":
      case "rewind": {
        const said = describeChangeEvent(e.kind, p, by, (seq) => promptTexts.get(seq));
        if (said) notice(e, said.tone, said.text, said.detail);
        break;
      }
      case "set-mode":
      case "set-model": {
        const what = e.kind === "set-mode" ? "permission mode" : "model";
        const requested = str(p?.requested) ?? str(p?.mode) ?? str(p?.model) ?? "?";
        const error = asObject(p?.error);
        // a switch the CLI confirmed is the mode from here on (a later report of the old one is a change back)
        const switched = str(p?.mode);
        if (e.kind === "set-mode" && !error && switched && switched !== mode?.value) mode = { value: switched, seq: e.seq };
        if (error)
          notice(
            e,
            "warning",
            `${by} could not switch the ${what} to ${requested}: ${str(error.message) ?? "refused"}.`,
          );
        else
          notice(
            e,
            "info",
            `${by} switched the ${what} to ${str(e.kind === "set-mode" ? p?.mode : p?.model) ?? requested}.`,
          );
        break;
      }
      case "stop":
        notice(e, "info", `${by} stopped the session's CLI.`);
        break;
      case "set-thinking": {
        const error = asObject(p?.error);
        const budget = p?.maxThinkingTokens;
        if (error) notice(e, "warning", `${by} could not change the thinking budget: ${str(error.message) ?? "refused"}.`);
        else
          notice(
            e,
            "info",
            typeof budget === "number"
              ? `${by} set the thinking budget to ${budget === 0 ? "off" : `${budget} tokens`}.`
              : `${by} set the thinking budget back to the CLI's default.`,
          );
        break;
      }
      case "cancel-queued": {
        const error = asObject(p?.error);
        if (error) notice(e, "warning", `${by} could not cancel a queued prompt: ${str(error.message) ?? "refused"}.`);
        else if (p?.cancelled === true) notice(e, "info", `${by} cancelled a queued prompt before it started.`);
        else notice(e, "info", `${by} tried to cancel a queued prompt, but it had already started.`);
        break;
      }
      case "decision": {
        const requestId = str(p?.requestId) ?? str(p?.request_id);
        const verdict = str(p?.behavior) ?? str(p?.decision) ?? str(p?.status) ?? "decided";
        const tool =
          str(p?.toolName) ??
          str(p?.tool_name) ??
          (requestId ? approvals.get(requestId)?.approval.toolName : undefined);
        // without a person (a workspace rule, the deadline, a cancel): what happened, not "Someone"
        notice(
          e,
          verdict.startsWith("deny") ? "warning" : "info",
          e.user ? `${by} ${pastTense(verdict)}${tool ? ` ${tool}` : ""}.` : `${tool ?? "A tool call"} was ${pastTense(verdict)}.`,
          e.user ? undefined : str(p?.message),
        );
        if (requestId) settleApproval(requestId);
        break;
      }
      case "stderr": {
        const text = str(p?.text) ?? (typeof e.payload === "string" ? e.payload : "");
        if (text) stderrTail = [...stderrTail, text].slice(-20);
        break;
      }
      case "process": {
        const phase = str(p?.phase);
        if (phase === "created") {
          notice(
            e,
            "info",
            `${by} started the session in ${str(p?.mode) ?? "default"} mode${str(p?.model) ? ` with ${str(p?.model)}` : ""}.`,
          );
        } else if (phase === "command-failed") {
          const error = asObject(p?.error);
          notice(e, "error", `The ${str(p?.command) ?? "command"} failed: ${str(error?.message) ?? "unknown error"}.`);
        } else if (phase === "exited") {
          // the CLI's queue ended with it
          turnOpen = false;
          for (const uuid of [...queuedPrompts.keys()]) unqueue(uuid);
          const expected = p?.expected === true;
          const how = p?.signal ? `signal ${String(p.signal)}` : `code ${String(p?.code ?? "?")}`;
          if (expected) notice(e, "info", "The CLI process ended.");
          else notice(e, "error", str(p?.reason) ?? `The CLI process exited unexpectedly (${how}).`, stderrTail.join("\n") || undefined);
          stderrTail = [];
        } else if (phase === "prompt-refused" || phase === "turn-interrupted") {
          turnOpen = false;
          notice(e, phase === "prompt-refused" ? "error" : "warning", str(p?.reason) ?? "The sidecar restarted; this prompt was not answered.");
        } else if (phase === "dead") {
          endedReason = str(p?.reason) ?? "its CLI could not be restarted";
          notice(e, "error", `This session has ended: ${endedReason}. Start a new session to go on.`);
        } else if (phase === "spawned" && p?.resumed === true) {
          notice(e, "info", "The CLI process restarted and resumed the conversation.");
        }
        break;
      }
      case "cli-bad-line":
        notice(
          e,
          "warning",
          "The CLI printed a line Conduit could not read (see the raw tab).",
          str(p?.raw) ?? str(p?.error),
        );
        break;
      case "cli": {
        if (!p || typeof p.type !== "string") {
          if (e.trimmed) pushItem({ kind: "trimmed", key: String(e.seq), seq: e.seq, label: "A large CLI message" });
          break;
        }
        switch (p.type) {
          case "system":
            readSystem(e, p);
            break;
          case "stream_event":
            readStreamEvent(p);
            break;
          case "assistant":
            readAssistant(e, p);
            break;
          case "user":
            readUser(e, p);
            break;
          case "result":
            readResult(e, p);
            turnOpen = false;
            // without the CLI's word on its queue, a prompt is not kept aside past the turn
            if (!sawLifecycle) for (const uuid of [...queuedPrompts.keys()]) unqueue(uuid);
            break;
          case "command_lifecycle": {
            sawLifecycle = true;
            const uuid = str(p.command_uuid);
            const state = str(p.state);
            if (!uuid || !state || state === "queued") break;
            if (state === "started") turnOpen = true;
            unqueue(uuid);
            break;
          }
          case "control_request": {
            const request = asObject(p.request);
            const requestId = str(p.request_id);
            if (request?.subtype !== "can_use_tool" || !requestId) break;
            const approval: ApprovalView = {
              requestId,
              toolName: str(request.tool_name) ?? "a tool",
              input: request.input,
            };
            const toolUseId = str(request.tool_use_id);
            const tool = toolUseId ? tools.get(toolUseId) : undefined;
            if (tool && !tool.result) {
              // the same question asked again keeps the card as it is
              if (!tool.approval || JSON.stringify(tool.approval) !== JSON.stringify(approval)) replaceTool(tool, { ...tool, approval });
              approvals.set(requestId, { approval, toolUseId });
            } else {
              const item = { kind: "approval" as const, key: `${e.seq}`, seq: e.seq, approval };
              pushItem(item);
              approvals.set(requestId, { approval, toolUseId, item });
            }
            break;
          }
          case "control_cancel_request": {
            const requestId = str(p.request_id);
            if (requestId) settleApproval(requestId);
            break;
          }
        }
        break;
      }
    }
  };

  function readSystem(e: WireEvent, p: Json) {
    // the mode moves on only when it changes: a report of the mode held keeps the view as it was
    const permissionMode = str(p.permissionMode);
    if (permissionMode && permissionMode !== mode?.value) mode = { value: permissionMode, seq: e.seq };
    switch (p.subtype) {
      case "init":
        model = str(p.model) ?? model;
        if (!sawInit) {
          sawInit = true;
          const version = str(p.claude_code_version);
          notice(
            e,
            "info",
            `Claude Code${version ? ` ${version}` : ""} started · model ${model ?? "default"} · ${permissionMode ?? "default"} mode`,
          );
        }
        break;
      case "api_retry": {
        const status = p.error_status == null ? "" : ` ${String(p.error_status)}`;
        const kind = str(p.error) ? ` (${str(p.error)})` : "";
        const delay = num(p.retry_delay_ms);
        const max = num(p.max_retries);
        notice(
          e,
          "warning",
          `API error${status}${kind}: retrying${delay !== undefined ? ` in ${(delay / 1000).toFixed(1)} s` : ""} (attempt ${String(p.attempt ?? "?")}${max !== undefined ? ` of ${max}` : ""}).`,
        );
        break;
      }
      case "permission_denied":
        notice(
          e,
          "warning",
          `${str(p.tool_name) ?? "A tool"} was denied automatically${str(p.decision_reason) ? `: ${str(p.decision_reason)}` : ""}.`,
          str(p.message),
        );
        break;
      case "informational":
        if (str(p.content)) notice(e, str(p.level) === "error" ? "error" : "info", str(p.content)!);
        break;
      case "compact_boundary":
        notice(e, "info", "The conversation history was compacted.");
        break;
      case "background_tasks_changed":
        backgroundTasks = Array.isArray(p.tasks) ? p.tasks : [];
        break;
      case "session_title_changed":
        title = str(p.title) ?? title;
        break;
      case "task_started":
      case "task_notification":
      case "task_updated": {
        const taskId = str(p.task_id);
        const toolUseId = str(p.tool_use_id) ?? (taskId ? taskTools.get(taskId) : undefined);
        const tool = toolUseId ? tools.get(toolUseId) : undefined;
        if (!taskId || !tool) break;
        taskTools.set(taskId, tool.id);
        const status =
          p.subtype === "task_started"
            ? "running"
            : (str(p.status) ?? str(asObject(p.patch)?.status) ?? tool.task?.status ?? "running");
        const backgrounded = p.is_backgrounded === true || tool.task?.backgrounded === true;
        const task = tool.task;
        if (task?.id !== taskId || task.status !== status || task.backgrounded !== backgrounded)
          replaceTool(tool, { ...tool, task: { id: taskId, status, backgrounded } });
        break;
      }
      case "status":
        if (p.compact_result === "failed")
          notice(e, "error", `Compaction failed${str(p.compact_error) ? `: ${str(p.compact_error)}` : ""}.`);
        break;
    }
  }

  function readStreamEvent(p: Json) {
    // Subagents stream too; their text shows when their blocks complete.
    if (p.parent_tool_use_id != null) return;
    const ev = asObject(p.event);
    if (!ev) return;
    const index = num(ev.index) ?? 0;
    switch (ev.type) {
      case "message_start":
        streamMessageId = str(asObject(ev.message)?.id) ?? str(p.api_message_id);
        break;
      case "content_block_start": {
        const block = asObject(ev.content_block);
        if (block?.type === "text") {
          partials = [
            ...partials,
            {
              key: `${streamMessageId ?? "m"}:${index}`,
              messageId: streamMessageId,
              index,
              text: str(block.text) ?? "",
            },
          ];
        }
        break;
      }
      case "content_block_delta": {
        const delta = asObject(ev.delta);
        if (delta?.type !== "text_delta") break;
        const text = str(delta.text) ?? "";
        const at = partials.findIndex((x) => x.messageId === streamMessageId && x.index === index);
        if (at >= 0) partials = partials.map((x, i) => (i === at ? { ...x, text: x.text + text } : x));
        else
          partials = [
            ...partials,
            { key: `${streamMessageId ?? "m"}:${index}`, messageId: streamMessageId, index, text },
          ];
        break;
      }
      case "message_stop":
        if (ev.abandoned_blocks) partials = partials.filter((x) => x.messageId !== streamMessageId);
        break;
    }
  }

  function readAssistant(e: WireEvent, p: Json) {
    const message = asObject(p.message);
    const content = Array.isArray(message?.content) ? message.content : [];
    const messageId = str(message?.id);
    const subagent = p.parent_tool_use_id != null;
    const parentToolUseId = str(p.parent_tool_use_id);
    const apiError =
      p.is_api_error_message === true || (typeof p.error === "string" && message?.model === "<synthetic>");
    content.forEach((raw, i) => {
      const block = asObject(raw);
      if (!block) return;
      const key = `${e.seq}:${i}`;
      if (block.type === "text") {
        const text = str(block.text) ?? "";
        if (!subagent) {
          // The final block replaces the streamed text it completes.
          const at = partials.findIndex((x) => x.messageId === messageId);
          partials = partials.filter((_, j) => j !== (at >= 0 ? at : 0));
        }
        if (apiError) {
          notice(e, "error", text || "The API returned an error.", undefined, `:${i}`);
          apiErrorShown = text;
        } else if (text.trim() !== "")
          pushItem({
            kind: "assistant",
            key,
            seq: e.seq,
            text,
            aborted: p.aborted === true,
            subagent,
            ...(parentToolUseId ? { parentToolUseId } : {}),
          });
      } else if (block.type === "thinking") {
        const text = str(block.thinking) ?? "";
        if (text.trim() !== "") pushItem({ kind: "thinking", key, seq: e.seq, text });
      } else if (block.type === "tool_use") {
        const id = str(block.id) ?? key;
        const item = {
          kind: "tool" as const,
          key,
          seq: e.seq,
          id,
          name: str(block.name) ?? "tool",
          input: block.input,
          subagent,
          ...(parentToolUseId ? { parentToolUseId } : {}),
        };
        tools.set(id, item);
        pushItem(item);
      }
    });
  }

  function readUser(e: WireEvent, p: Json) {
    if (p.isReplay === true) return;
    const message = asObject(p.message);
    const content = message?.content;
    if (typeof content === "string") {
      // Interrupt markers are left out: the turn's result says it was interrupted.
      if (p.isSynthetic === true && !interruptMarker.test(content.trim()))
        notice(e, "info", "Summary of the earlier conversation.", content);
      return;
    }
    if (!Array.isArray(content)) {
      if (e.trimmed) pushItem({ kind: "trimmed", key: String(e.seq), seq: e.seq, label: "A large tool result" });
      return;
    }
    content.forEach((raw, i) => {
      const block = asObject(raw);
      if (!block) return;
      if (block.type === "tool_result") {
        const id = str(block.tool_use_id);
        const result: ToolResultView = {
          seq: e.seq,
          text: toolResultText(block.content),
          isError: block.is_error === true,
          structured: content.length === 1 ? p.tool_use_result : undefined,
          trimmed: e.trimmed,
        };
        const tool = id ? tools.get(id) : undefined;
        if (tool) {
          if (tool.approval) approvals.delete(tool.approval.requestId);
          replaceTool(tool, { ...tool, result, approval: undefined });
        } else {
          notice(
            e,
            result.isError ? "error" : "info",
            result.isError ? "A tool failed." : "A tool answered.",
            result.text,
            `:${i}`,
          );
        }
      } else if (block.type === "text") {
        const text = str(block.text) ?? "";
        if (p.isSynthetic === true && text && !interruptMarker.test(text.trim()))
          notice(e, "info", "Summary of the earlier conversation.", text, `:${i}`);
      }
    });
  }

  function readResult(e: WireEvent, p: Json) {
    turns++;
    partials = [];
    // Open approvals stay open: a background subagent can still be waiting after its parent's result.
    const usage = asObject(p.usage);
    tokens = {
      input: tokens.input + (num(usage?.input_tokens) ?? 0),
      output: tokens.output + (num(usage?.output_tokens) ?? 0),
      cacheRead: tokens.cacheRead + (num(usage?.cache_read_input_tokens) ?? 0),
      cacheWrite: tokens.cacheWrite + (num(usage?.cache_creation_input_tokens) ?? 0),
    };
    // CLI 1.0.x names the cumulative total `total_cost` / `cost_usd`
    const total = num(p.total_cost_usd) ?? num(p.total_cost) ?? num(p.cost_usd);
    const perModel = asObject(p.model_usage_since_last_result);
    let turnCost: number | undefined;
    if (perModel) {
      turnCost = Object.values(perModel).reduce<number>((sum, m) => sum + (num(asObject(m)?.costUSD) ?? 0), 0);
    } else if (total !== undefined) {
      // total_cost_usd is cumulative per CLI process; a smaller total means a new process.
      turnCost = total >= lastTotalCost ? total - lastTotalCost : total;
    }
    if (total !== undefined) lastTotalCost = total;
    costUsd += turnCost ?? 0;
    const terminal = str(p.terminal_reason) ?? "";
    const interrupted = terminal.startsWith("aborted");
    const isError = p.is_error === true && !interrupted;
    const errors = Array.isArray(p.errors) ? p.errors.filter((x): x is string => typeof x === "string") : [];
    const reason = errors.join("; ") || str(p.result) || str(p.subtype) || "unknown error";
    const status = p.api_error_status != null ? ` (API ${String(p.api_error_status)})` : "";
    const text = interrupted
      ? "Turn stopped."
      : isError
        ? reason === apiErrorShown
          ? `The turn failed${status}.`
          : `The turn failed${status}: ${reason}`
        : "Turn finished.";
    apiErrorShown = undefined;
    pushItem({
      kind: "turn-end",
      key: String(e.seq),
      seq: e.seq,
      isError,
      interrupted,
      text,
      durationMs: num(p.duration_ms),
      costUsd: turnCost,
    });
  }

  return {
    add(events) {
      for (const e of events) addOne(e);
      if (events.length > 0) changed = true;
    },
    view() {
      if (!changed && cached) return cached;
      if (itemsChanged) itemsView = items.slice();
      itemsChanged = false;
      changed = false;
      const next: Conversation = { items: itemsView, partials, mode, model, costUsd, tokens, turns, firstPrompt, backgroundTasks, title, endedReason };
      // Events that change nothing shown (a status line, a stream's start, an init naming the same
      // model) keep the view's identity, so the page does not draw anything again for them.
      if (!cached || (Object.keys(next) as (keyof Conversation)[]).some((key) => next[key] !== cached![key])) cached = next;
      return cached;
    },
  };
}

/** Plain text of a tool_result's content (a string, or text and image blocks). */
export function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content == null ? "" : JSON.stringify(content, null, 2);
  return content
    .map((raw) => {
      const block = asObject(raw);
      if (block?.type === "text") return str(block.text) ?? "";
      if (block?.type === "image") return "[image]";
      return JSON.stringify(raw);
    })
    .join("\n");
}

function pastTense(verdict: string): string {
  if (verdict.startsWith("allow")) return "allowed";
  if (verdict.startsWith("deny") || verdict.startsWith("denied")) return "denied";
  return verdict;
}

function asObject(value: unknown): Json | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** The image references of a prompt event (`{id, mediaType, name?}`), if it has any. */
function promptImagesOf(raw: unknown): { id: string; mediaType: string; name?: string }[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  const images = raw.flatMap((r) => {
    const o = typeof r === "object" && r !== null ? (r as Record<string, unknown>) : undefined;
    if (!o || typeof o.id !== "string" || typeof o.mediaType !== "string") return [];
    return [{ id: o.id, mediaType: o.mediaType, ...(typeof o.name === "string" ? { name: o.name } : {}) }];
  });
  return images.length > 0 ? images : undefined;
}
