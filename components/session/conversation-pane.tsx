"use client";

/**
 * The conversation as the session page and the history transcript draw it: the pane (the live
 * list, the server's picture of the last screen while loading, the streamed reply), one item
 * (message, tool call, notice), and what is pinned above the prompt box.
 */
import { memo, useMemo, type ReactNode } from "react";
import type { Conversation, ConversationItem } from "./conversation";
import { ConversationPreview } from "./conversation-preview";
import { ConversationList, type ConversationRow } from "./conversation-list";
import type { EarlierPages } from "./conversation-pages";
import { formatDuration, formatRelative, formatUsd } from "./format";
import { Markdown } from "./markdown";
import { ToolCard } from "./tool-card";
import { BackgroundTasks } from "./tools/background-tasks";
import { SubagentContext } from "./tools/subagent";
import { PinnedTodos } from "./tools/todo-list";
import { latestTodos, nestSubagents, readBackgroundTasks } from "./tools/tool-data";
import { PromptImages } from "./prompt/prompt-images";
import { avatarColour, initials } from "./avatar";

/** The latest checklist and the background tasks, pinned above the prompt box. */
export const SessionExtras = memo(function SessionExtras({
  conversation,
  canWrite,
  onStopTask,
}: {
  conversation: Conversation;
  canWrite: boolean;
  onStopTask: (taskId: string) => Promise<string | undefined>;
}) {
  const todos = useMemo(() => latestTodos(conversation.items), [conversation.items]);
  const tasks = useMemo(() => readBackgroundTasks(conversation.backgroundTasks), [conversation.backgroundTasks]);
  return (
    <>
      {todos && todos.todos.length > 0 && <PinnedTodos todos={todos.todos} />}
      <BackgroundTasks tasks={tasks} canStop={canWrite} onStop={onStopTask} />
    </>
  );
});

/** The picture of the last screen shows at most this many messages and tool calls: a tall screen's worth. */
const previewItems = 16;

export const ConversationPane = memo(function ConversationPane(props: {
  imageBase: string;
  conversation: Conversation;
  rootPath: string;
  onRewind?: (promptSeq: number) => void;
  /** While loading: the server's picture of the last screen, shown instead of "Loading", one screen tall. */
  preview?: Conversation;
  loading: boolean;
  failed: boolean;
  onLoadFull: (seq: number) => void;
  pages: EarlierPages;
}) {
  const { conversation, rootPath, loading, failed, onLoadFull, onRewind, imageBase, pages, preview } = props;
  const previewing = loading && preview !== undefined;
  const items = previewing ? preview.items : conversation.items;
  const nested = useMemo(() => nestSubagents(items), [items]);
  // Prompts waiting behind the running turn (and the ones just sent while it streams) are drawn
  // after it, where they will be answered, not above the answer still arriving.
  const streamingNow = !previewing && conversation.partials.length > 0;
  const { main, later } = useMemo(() => {
    const waits = (item: ConversationItem) => item.kind === "user" && (item.queued === true || (streamingNow && item.pending !== undefined));
    if (!nested.top.some(waits)) return { main: nested.top, later: [] as ConversationItem[] };
    return { main: nested.top.filter((item) => !waits(item)), later: nested.top.filter(waits) };
  }, [nested, streamingNow]);
  const subagents = useMemo(
    () => ({
      children: nested.children,
      render: (item: ConversationItem) => (
        <ConversationItemView item={item} rootPath={rootPath} onLoadFull={onLoadFull} />
      ),
    }),
    [nested, rootPath, onLoadFull],
  );
  const rows = useMemo<ConversationRow[]>(
    () =>
      main.map((item) => ({
        key: item.key,
        deps: [item, rootPath, onLoadFull, onRewind, imageBase],
        render: () => (
          <ConversationItemView item={item} rootPath={rootPath} onLoadFull={onLoadFull} onRewind={onRewind} imageBase={imageBase} />
        ),
      })),
    [main, rootPath, onLoadFull, onRewind, imageBase],
  );

  if (previewing)
    return (
      <SubagentContext.Provider value={subagents}>
        <ConversationPreview>
          {nested.top.slice(-previewItems).map((item) => (
            <li key={item.key} className="pb-3">
              <ConversationItemView item={item} rootPath={rootPath} onLoadFull={onLoadFull} imageBase={imageBase} />
            </li>
          ))}
        </ConversationPreview>
      </SubagentContext.Provider>
    );
  if (loading) return <p className="py-10 text-center text-sm text-zinc-500">Loading the conversation…</p>;
  if (failed)
    return (
      <p className="py-10 text-center text-sm text-zinc-500">
        The conversation is not available until the live session opens.
      </p>
    );
  if (conversation.items.length === 0 && conversation.partials.length === 0 && !pages.more) {
    return (
      <p className="py-10 text-center text-sm text-zinc-500">
        No messages yet. Send a prompt to start the conversation.
      </p>
    );
  }
  return (
    <SubagentContext.Provider value={subagents}>
      <ConversationList
        rows={rows}
        streaming={conversation.partials.length > 0}
        pages={pages}
        tail={
          (conversation.partials.length > 0 || later.length > 0) && (
            <>
              {conversation.partials.length > 0 && (
                <ol className="space-y-3 pb-3" aria-label="Streaming reply" aria-live="polite" aria-busy="true">
                  {conversation.partials.map((p) => (
                    <li key={`partial-${p.key}`}>
                      <AssistantBubble streaming>
                        <Markdown text={p.text} streaming />
                      </AssistantBubble>
                    </li>
                  ))}
                </ol>
              )}
              {later.length > 0 && (
                <ol className="space-y-3 pb-3" aria-label="Waiting for the running turn" data-testid="waiting-prompts">
                  {later.map((item) => (
                    <li key={item.key}>
                      <ConversationItemView item={item} rootPath={rootPath} onLoadFull={onLoadFull} imageBase={imageBase} />
                    </li>
                  ))}
                </ol>
              )}
            </>
          )
        }
      />
    </SubagentContext.Provider>
  );
});

function AssistantBubble({
  children,
  streaming,
  aborted,
  subagent,
}: {
  children: ReactNode;
  streaming?: boolean;
  aborted?: boolean;
  subagent?: boolean;
}) {
  return (
    <div
      data-testid="message-assistant"
      data-streaming={streaming ? "true" : "false"}
      aria-busy={streaming || undefined}
      className="flex gap-3"
    >
      <span
        aria-hidden
        className={`mt-0.5 inline-flex size-6 shrink-0 items-center justify-center rounded-md bg-orange-100 text-[11px] font-bold text-orange-700 dark:bg-orange-900/50 dark:text-orange-300 ${streaming ? "motion-safe:animate-pulse" : ""}`}
      >
        C
      </span>
      <div className="min-w-0 flex-1">
        <span className="sr-only">Claude{subagent ? " (subagent)" : ""}: </span>
        {subagent && <div className="mb-0.5 text-[11px] text-zinc-500">subagent</div>}
        {children}
        {streaming && <div className="mt-1 text-[11px] text-zinc-400">writing…</div>}
        {aborted && <div className="mt-1 text-xs text-zinc-500 italic">(cut short: stopped)</div>}
      </div>
    </div>
  );
}

const noticeTone = {
  info: "text-zinc-500",
  warning: "text-amber-800 bg-amber-50 dark:bg-amber-950/40 dark:text-amber-300",
  error: "text-red-800 bg-red-50 dark:bg-red-950/40 dark:text-red-300",
} as const;

/**
 * One conversation item as the live session draws it; the history transcript draws past sessions
 * with it. Memoized: the incremental conversation keeps an unchanged item's object, so a new event
 * re-renders only the items it changed.
 */
export const ConversationItemView = memo(function ConversationItemView({
  item,
  rootPath,
  onLoadFull,
  onRewind,
  imageBase,
}: {
  item: ConversationItem;
  rootPath: string;
  onLoadFull: (seq: number) => void;
  /** Offers to rewind the workspace's files to before this prompt (owners and editors). */
  onRewind?: (promptSeq: number) => void;
  /** Where the session's prompt images are served (`…/sessions/<id>/images`). */
  imageBase?: string;
}) {
  switch (item.kind) {
    case "user":
      return (
        <div
          data-testid="message-user"
          data-author={item.author}
          data-pending={item.pending ? "true" : undefined}
          data-queued={item.queued ? "true" : undefined}
          className="flex gap-3"
        >
          <span
            aria-hidden
            className={`mt-0.5 inline-flex size-6 shrink-0 items-center justify-center rounded-md text-[10px] font-semibold ${avatarColour(item.author)}`}
          >
            {initials(item.author)}
          </span>
          <div className="min-w-0 flex-1 rounded-lg bg-indigo-50 px-3 py-2 dark:bg-indigo-950/40">
            <div className="mb-0.5 text-xs font-medium text-indigo-900 dark:text-indigo-200">
              <span data-testid="message-author">{item.author}</span>
              <span suppressHydrationWarning className="ml-2 font-normal text-indigo-900/50 dark:text-indigo-200/50">
                {item.pending ? "sending…" : formatRelative(item.at)}
              </span>
              {item.queued && (
                <span className="ml-2 rounded bg-indigo-100 px-1 font-normal text-indigo-900/70 dark:bg-indigo-900/50 dark:text-indigo-200/70">
                  queued: waits for the running turn
                </span>
              )}
              {onRewind && !item.pending && (
                <button
                  type="button"
                  data-testid="rewind-button"
                  data-seq={item.seq}
                  className="float-right font-normal text-indigo-900/60 hover:underline dark:text-indigo-200/60"
                  title="Put the workspace's files back as they were before this prompt (a preview first)"
                  onClick={() => onRewind(item.seq)}
                >
                  Rewind files
                </button>
              )}
            </div>
            <p className="text-sm break-words whitespace-pre-wrap">{item.text}</p>
            {item.images && imageBase && <PromptImages images={item.images} base={imageBase} />}
            {item.pending && item.pending.imageCount > 0 && (
              <p className="mt-1 text-xs text-indigo-900/60 dark:text-indigo-200/60">
                {item.pending.imageCount === 1 ? "1 image" : `${item.pending.imageCount} images`}
              </p>
            )}
          </div>
        </div>
      );
    case "assistant":
      return (
        <AssistantBubble aborted={item.aborted} subagent={item.subagent}>
          <Markdown text={item.text} />
        </AssistantBubble>
      );
    case "thinking":
      return (
        <details className="ml-9 text-xs text-zinc-500">
          <summary className="cursor-pointer select-none">Thinking</summary>
          <p className="mt-1 whitespace-pre-wrap">{item.text}</p>
        </details>
      );
    case "tool":
      return (
        <div className="ml-9">
          <ToolCard
            name={item.name}
            input={item.input}
            result={item.result}
            approval={item.approval}
            subagent={item.subagent}
            rootPath={rootPath}
            onLoadFull={onLoadFull}
            id={item.id}
            task={item.task}
          />
        </div>
      );
    case "approval":
      return (
        <div
          data-testid="approval-pending"
          className="ml-9 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-xs text-amber-900 dark:border-amber-800 dark:bg-amber-950/50 dark:text-amber-200"
        >
          Waiting for approval to run <span className="font-mono font-semibold">{item.approval.toolName}</span>. The CLI
          is paused until someone decides.
        </div>
      );
    case "notice":
      return (
        <div
          data-testid="notice"
          data-tone={item.tone}
          role={item.tone === "error" ? "alert" : undefined}
          className={`ml-9 rounded-md text-xs ${item.tone === "info" ? "" : "px-3 py-1.5"} ${noticeTone[item.tone]}`}
        >
          {item.text}
          {item.detail && (
            <details className="mt-1">
              <summary className="cursor-pointer select-none opacity-80">details</summary>
              <pre className="mt-1 max-h-60 overflow-auto font-mono whitespace-pre-wrap">{item.detail}</pre>
            </details>
          )}
        </div>
      );
    case "turn-end":
      return (
        <div
          data-testid="turn-end"
          data-error={item.isError}
          data-interrupted={item.interrupted}
          role={item.isError ? "alert" : undefined}
          className={`ml-9 flex items-center gap-2 text-xs ${item.isError ? "rounded-md bg-red-50 px-3 py-1.5 text-red-800 dark:bg-red-950/40 dark:text-red-300" : "text-zinc-400"}`}
        >
          {!item.isError && <span aria-hidden className="h-px w-6 bg-zinc-300 dark:bg-zinc-700" />}
          <span>{item.text}</span>
          {item.durationMs !== undefined && <span>{formatDuration(item.durationMs)}</span>}
          {item.costUsd !== undefined && item.costUsd > 0 && <span>{formatUsd(item.costUsd)}</span>}
        </div>
      );
    case "trimmed":
      return (
        <div className="ml-9 text-xs text-zinc-500">
          {item.label} (#{item.seq}) was trimmed for the browser.{" "}
          <button
            type="button"
            className="text-indigo-600 hover:underline dark:text-indigo-400"
            onClick={() => onLoadFull(item.seq)}
          >
            Load it whole
          </button>
        </div>
      );
  }
});
