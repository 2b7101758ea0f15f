"use client";

import Link from "next/link";
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { Ack } from "@/server/shared/wire/ack";
import type { CommandAccepted, PermissionModeChoice, SessionView as SessionInfo, SetModelResult, SetModeResult, WireEvent } from "@/server/shared/wire/session";
import { buildConversation, type ConversationItem } from "./conversation";
import { isLogged, loggedPending, withPendingPrompts, type PendingPrompt } from "./pending-prompts";
import { IncrementalConversation } from "./incremental-conversation";
import { useEarlierPages } from "./conversation-pages";
import { formatRelative, formatTokens, formatUsd, sessionTitle } from "./format";
import { PromptBox, type DemoScenarioHint, type OutgoingImage } from "./prompt/prompt-box";
import { ContextMeter, ModelPicker, ThinkingSelect } from "./prompt/session-controls-bar";
import { useSessionControls } from "./prompt/use-session-controls";
import { SessionMcpStatus } from "./session-mcp-status";
import { StatusBadge } from "./status-badge";
import { SessionManage } from "./session-manage";
import { SessionApprovals } from "@/components/approval/session-approvals";
import { RoleChangedNotice, useLiveRole } from "@/components/live-role";
import { markLatency } from "./latency-marks";
import { requestOpenFiles } from "./tools/open-file";
import { ChangesPanel, RawLog, RewindDialog } from "./session-panels-lazy";
import { ConnectionNotice, useSocket } from "./use-socket";
import { ackMessage, command, emitCommand, manageCommand, newCommandId, type CommandName } from "./wire-client";
import { useSessionStream } from "./use-session-stream";
import { ModeSwitcher, Presence, StopButton, TabButton } from "./session-header-controls";
import { ConversationPane, SessionExtras } from "./conversation-pane";
import { StickySessionBar, usePageEscapeStops, useScrolledAway, useStopTurn } from "./session-stop";

export interface SessionViewProps {
  workspace: { slug: string; name: string; role: "owner" | "editor" | "viewer"; rootPath: string; network?: { label: string; detail: string } };
  /** The session as the database had it when the page was rendered; the subscribe reply replaces it. */
  initialSession: SessionInfo;
  /**
   * The end of the log as the server read it for the page: shown as the conversation's last
   * screen (`ConversationPreview`) until the live log arrives. Absent or empty: "Loading".
   */
  initialTail?: readonly WireEvent[];
  currentUser: { id: string; name: string };
  demoScenarios?: readonly DemoScenarioHint[];
  /** Shown under the session's Changes: the repository's git panel and the session's worktree panel. */
  changesAside?: ReactNode;
}

const activeStatuses = new Set(["running", "awaiting-approval", "stalled", "starting"]);

/** One live session: conversation, prompt box, controls, presence and the raw log. */
export function SessionView({ workspace, initialSession, initialTail, currentUser, demoScenarios, changesAside }: SessionViewProps) {
  const sessionId = initialSession.id;
  const state = useSocket();
  const { socket } = state;
  const { log, dispatch, logRef, info, viewers, subscribed, subscribeError, resubscribe, removed } = useSessionStream(socket, initialSession);
  const [loadFullError, setLoadFullError] = useState<string>();
  const [tab, setTab] = useState<"conversation" | "raw" | "changes">("conversation");
  const [rewindSeq, setRewindSeq] = useState<number>();
  const [mode, setMode] = useState({ value: initialSession.mode, seq: 0 });

  // only the events appended since the last render are folded; unchanged items keep their identity
  const [incremental] = useState(() => new IncrementalConversation());
  const conversation = useMemo(() => incremental.update(log.events), [incremental, log.events]);
  // the prompts sent from this page, shown at Enter until their events arrive (pending-prompts.ts)
  const [pending, setPending] = useState<readonly PendingPrompt[]>([]);
  const [adopted] = useState(() => new Map<number, string>());
  const [rekeyed] = useState(() => new WeakMap<ConversationItem, ConversationItem>());
  const shownItems = useMemo(
    () => withPendingPrompts(conversation.items, pending, adopted, rekeyed),
    [conversation.items, pending, adopted, rekeyed],
  );
  const shown = shownItems === conversation.items ? conversation : { ...conversation, items: shownItems };
  // folded once: the picture never changes, and is dropped for good once the live log shows
  const [preview] = useState(() => (initialTail && initialTail.length > 0 ? buildConversation(initialTail) : undefined));
  const earlier = useEarlierPages({ socket, sessionId, log, dispatch });
  // the Changes tab reloads when a turn's changes, a revert or a rewind is logged
  const changesKey = useMemo(
    () => String(log.events.findLast((e) => e.kind === "changes" || e.kind === "revert" || e.kind === "rewind")?.seq ?? 0),
    [log.events],
  );

  // The mode shown is the last one confirmed: by the CLI in the log, by a status fact, or by a set-mode ack.
  useEffect(() => {
    if (conversation.mode) setMode((m) => (conversation.mode!.seq > m.seq ? conversation.mode! : m));
  }, [conversation.mode]);
  useEffect(() => {
    setMode((m) => (m.value === info.mode ? m : { value: info.mode, seq: m.seq }));
  }, [info.mode]);

  // the role as it is now: a change while the page is open reaches it within about 2 s (live-role.tsx)
  const live = useLiveRole(initialSession.workspaceId, workspace.role);
  const canWrite = live.role !== "viewer";
  const dead = info.status === "dead";
  const promptRefusal = !canWrite
    ? "You are a viewer in this workspace: you can watch this session but not prompt it. Ask an owner for the editor role."
    : dead
      ? `This session has ended: ${conversation.endedReason ?? "its CLI could not be restarted"}. Start a new session from the workspace page.`
      : undefined;

  const send = useCallback(
    async <T,>(name: CommandName, payload: Record<string, unknown>): Promise<Ack<T>> => {
      if (!socket) return { ok: false, error: { code: "unavailable", message: "Not connected yet." } };
      return emitCommand<T>(socket, name, { sessionId, commandId: newCommandId(), ...payload });
    },
    [socket, sessionId],
  );

  // stable, so memoized conversation rows do not re-render for it
  const loadFull = useCallback(
    async (seq: number) => {
      if (!socket) return;
      const ack = await emitCommand<WireEvent>(socket, command.fetchEvent, { sessionId, seq });
      if (ack.ok) {
        setLoadFullError(undefined);
        dispatch({ type: "replace", event: { ...ack.data, trimmed: false } });
      } else {
        setLoadFullError(ackMessage(ack));
      }
    },
    [socket, sessionId],
  );

  // The prompts on their way, in the order they were made, and how many are still unanswered.
  const promptChain = useRef<Promise<void>>(Promise.resolve());
  const promptsUnanswered = useRef(0);
  const onPrompt = useCallback(
    async (text: string, images: OutgoingImage[] = []) => {
      const commandId = newCommandId();
      const payload = images.length > 0 ? { text, images, commandId } : { text, commandId };
      // One after another: the next waits for the last one's answer. With none on its way the
      // prompt goes out now, in the keydown's own task, before React draws it (an awaited chain
      // would put the sidecar's receipt behind that render).
      const sent =
        promptsUnanswered.current === 0
          ? send<CommandAccepted>(command.prompt, payload)
          : promptChain.current.then(() => send<CommandAccepted>(command.prompt, payload));
      promptsUnanswered.current += 1;
      promptChain.current = sent.then(
        () => void (promptsUnanswered.current -= 1),
        () => void (promptsUnanswered.current -= 1),
      );
      const entry: PendingPrompt = {
        key: `prompt:${commandId}`,
        text,
        imageCount: images.length,
        author: currentUser.name,
        authorId: currentUser.id,
        at: new Date().toISOString(),
        afterSeq: logRef.current.events.at(-1)?.seq ?? 0,
      };
      setPending((list) => {
        // the prompts already logged leave the list; their rows keep the key they were shown with
        const logged = loggedPending(logRef.current.events, list);
        for (const p of logged) adopted.set(p.seq!, p.key);
        return [...list.filter((p) => !logged.includes(p)), entry];
      });
      const ack = await sent;
      markLatency("prompt-acked");
      if (!ack.ok) setPending((list) => list.filter((p) => p !== entry));
      else {
        // Usually its event came first and the row is drawn already: nothing to draw again (the
        // CLI is at work now). Else the seq is what finds its event when it comes.
        entry.seq = ack.data.seq;
        if (!isLogged(logRef.current.events, ack.data.seq)) setPending((list) => [...list]);
      }
      return ackMessage(ack);
    },
    [send, currentUser.name, currentUser.id, logRef, adopted],
  );
  const controls = useSessionControls({ socket, sessionId, events: log.events, ready: subscribed });
  const imageBase = `/api/workspaces/${encodeURIComponent(workspace.slug)}/sessions/${encodeURIComponent(sessionId)}/images`;

  const loading = !subscribed && log.events.length === 0 && !subscribeError;
  const previewing = loading && preview !== undefined && tab === "conversation";
  const cost = Math.max(info.costUsd, conversation.costUsd);
  const infoTokens = info.tokens.input + info.tokens.output + info.tokens.cacheRead + info.tokens.cacheWrite;
  const convTokens =
    conversation.tokens.input +
    conversation.tokens.output +
    conversation.tokens.cacheRead +
    conversation.tokens.cacheWrite;
  const tokens = infoTokens >= convTokens ? info.tokens : conversation.tokens;
  const others = useMemo(
    () => viewers.filter((v, i, all) => v.userId !== currentUser.id && all.findIndex((w) => w.userId === v.userId) === i),
    [viewers, currentUser.id],
  );
  // The header's controls and the panes are memoized, and most events change none of their
  // props (a status line, a stream's start): their handlers keep their identity across renders.
  const switchMode = useCallback(
    async (next: PermissionModeChoice) => {
      const ack = await send<SetModeResult>(command.setMode, { mode: next });
      if (ack.ok) {
        const confirmed = ack.data.mode || next;
        setMode((m) => ({
          value: confirmed,
          seq: Math.max(m.seq, ack.data.seq, logRef.current.events.at(-1)?.seq ?? 0),
        }));
      }
      return ackMessage(ack);
    },
    [send],
  );
  const { loadModels, refreshContext } = controls;
  const openModels = useCallback(() => void loadModels(), [loadModels]);
  const pickModel = useCallback(async (model: string) => ackMessage(await send<SetModelResult>(command.setModel, { model })), [send]);
  const refreshMeter = useCallback(() => void refreshContext(), [refreshContext]);
  const compact = useMemo(() => (canWrite && !dead ? () => onPrompt("/compact") : undefined), [canWrite, dead, onPrompt]);
  const interrupt = useCallback(async () => ackMessage(await send(command.interrupt, {})), [send]);
  // Stop within reach while a turn runs: the composer's Stop, Esc, and the bar that stays on screen
  const { stop, stopping } = useStopTurn(interrupt);
  const turnRunning = activeStatuses.has(info.status);
  const canStop = canWrite && !dead;
  usePageEscapeStops(turnRunning && canStop, stop);
  const headerRef = useRef<HTMLElement>(null);
  const headerAway = useScrolledAway(headerRef);
  const stopTask = useCallback(async (taskId: string) => ackMessage(await send(manageCommand.stopTask, { taskId })), [send]);

  return (
    <div
      data-testid="session-view"
      data-session-id={sessionId}
      // while the picture of the last screen shows, the page is one screen tall: the picture
      // takes what the header and the prompt box leave, its end right above the prompt box
      className={`flex flex-col gap-3 ${previewing ? "h-[calc(100vh-8rem)]" : "min-h-[calc(100vh-8rem)]"}`}
    >
      <StickySessionBar
        shown={headerAway}
        title={sessionTitle(info, earlier.more ? undefined : conversation.firstPrompt)}
        status={<StatusBadge status={info.status} />}
        running={turnRunning}
        canStop={canStop}
        stopping={stopping}
        onStop={() => void stop()}
      />
      <header ref={headerRef} className="space-y-2">
        <nav aria-label="Breadcrumb" className="text-xs [overflow-wrap:anywhere] text-zinc-500">
          <Link
            href={`/w/${encodeURIComponent(workspace.slug)}`}
            className="hover:text-zinc-800 hover:underline dark:hover:text-zinc-200"
          >
            {workspace.name}
          </Link>
          <span className="mx-1.5">/</span>
          <span>sessions</span>
        </nav>
        <div className="flex flex-wrap items-center gap-x-3 gap-y-2">
          <h1 className="min-w-0 truncate text-lg font-semibold tracking-tight">
            {sessionTitle(info, earlier.more ? undefined : conversation.firstPrompt)}
          </h1>
          <span aria-live="polite" aria-atomic="true" className="inline-flex">
            <StatusBadge status={info.status} testId="session-status" />
          </span>
          <ConnectionNotice state={state} />
          {workspace.network && (
            <span data-testid="session-network" title={workspace.network.detail} className="rounded border border-zinc-200 px-1.5 text-xs text-zinc-500 dark:border-zinc-800">
              {workspace.network.label}
            </span>
          )}
          <div className="ml-auto flex flex-wrap items-center gap-2">
            <Presence others={others} />
            <ModeSwitcher
              mode={mode.value}
              bypassAvailable={info.bypassAvailable}
              disabledReason={!canWrite ? "Viewers cannot change the mode." : dead ? "The session is dead." : undefined}
              onSwitch={switchMode}
            />
            <ModelPicker
              current={controls.currentModel ?? info.model}
              list={controls.models}
              disabledReason={!canWrite ? "Viewers cannot change the model." : dead ? "The session is dead." : undefined}
              onOpen={openModels}
              onPick={pickModel}
            />
            <ThinkingSelect
              budget={controls.thinking}
              adaptive={controls.currentModelInfo?.adaptiveThinking === true}
              disabledReason={!canWrite ? "Viewers cannot change the thinking budget." : dead ? "The session is dead." : undefined}
              onSet={controls.setThinking}
            />
            <ContextMeter
              usage={controls.context.usage}
              error={controls.context.error}
              loading={controls.context.loading}
              onRefresh={refreshMeter}
              onCompact={compact}
            />
            <StopButton
              canWrite={canWrite}
              active={turnRunning}
              onStop={stop}
            />
            <SessionManage
              sessionId={sessionId}
              slug={workspace.slug}
              title={sessionTitle(info, earlier.more ? undefined : conversation.firstPrompt)}
              role={live.role}
              processLive={!["stopped", "crashed", "dead"].includes(info.status)}
              initiallyArchived={initialSession.archivedAt !== undefined}
              send={send}
              removed={removed}
            />
          </div>
        </div>
        <div className="flex flex-wrap items-center gap-x-4 gap-y-1 text-xs text-zinc-500">
          <span>
            started by <span className="text-zinc-700 dark:text-zinc-300">{info.createdBy.name}</span> ·{" "}
            <span suppressHydrationWarning>{formatRelative(info.createdAt)}</span>
          </span>
          <span>
            model{" "}
            <span className="font-mono text-zinc-700 dark:text-zinc-300">
              {conversation.model ?? info.model ?? "CLI default"}
            </span>
          </span>
          <span
            data-testid="session-cost"
            title={`input ${tokens.input} · output ${tokens.output} · cache read ${tokens.cacheRead} · cache write ${tokens.cacheWrite}`}
          >
            <span className="font-medium text-zinc-700 tabular-nums dark:text-zinc-300">{formatUsd(cost)}</span> ·{" "}
            <span className="tabular-nums">
              {formatTokens(tokens.input + tokens.cacheRead + tokens.cacheWrite)} in / {formatTokens(tokens.output)} out
            </span>{" "}
            tokens
          </span>
        </div>
        <SessionMcpStatus socket={socket ?? undefined} sessionId={sessionId} ready={subscribed} slug={workspace.slug} />
        <RoleChangedNotice notice={live.notice} onDismiss={live.dismiss} />
        {removed && removed.archived === undefined && (
          <p
            role="alert"
            data-testid="session-deleted"
            className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950/50 dark:text-red-300"
          >
            This session was deleted by an owner.{" "}
            <Link href={`/w/${encodeURIComponent(workspace.slug)}`} className="font-medium underline">
              Back to the workspace
            </Link>
          </p>
        )}
        {subscribeError && (
          <p
            role="alert"
            data-testid="session-error"
            className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950/50 dark:text-red-300"
          >
            Could not open the live session: {subscribeError}{" "}
            <button type="button" className="font-medium underline" onClick={resubscribe}>
              Retry
            </button>
          </p>
        )}
        {loadFullError && (
          <p
            role="alert"
            data-testid="load-full-error"
            className="rounded-md bg-amber-50 px-3 py-2 text-sm text-amber-900 dark:bg-amber-950/50 dark:text-amber-200"
          >
            {loadFullError}{" "}
            <button type="button" className="font-medium underline" onClick={() => setLoadFullError(undefined)}>
              Dismiss
            </button>
          </p>
        )}
      </header>

      <div className="flex items-end border-b border-zinc-200 dark:border-zinc-800">
        <div
          role="tablist"
          aria-label="Session views"
          className="flex gap-1 text-sm"
          onKeyDown={(e) => {
            if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
            const order = ["conversation", "changes", "raw"] as const;
            const next = order[(order.indexOf(tab) + (e.key === "ArrowRight" ? 1 : order.length - 1)) % order.length]!;
            setTab(next);
            document.getElementById(`tab-${next}`)?.focus();
          }}
        >
          <TabButton id="conversation" active={tab === "conversation"} onSelect={() => setTab("conversation")}>
            Conversation
          </TabButton>
          <TabButton id="changes" testId="changes-tab" active={tab === "changes"} onSelect={() => setTab("changes")}>
            Changes
          </TabButton>
          <TabButton id="raw" testId="raw-tab" active={tab === "raw"} onSelect={() => setTab("raw")}>
            Raw <span className="text-xs text-zinc-400 tabular-nums">{log.events.length}</span>
          </TabButton>
        </div>
        {/* narrow screens: the Files drawer's button on the page's edge would cover the conversation */}
        <div className="mb-1 ml-auto sm:hidden">
          <button type="button" data-testid="files-open" className="btn-quiet px-2 py-1 text-xs" onClick={requestOpenFiles}>
            Files
          </button>
        </div>
      </div>

      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className={previewing ? "flex min-h-0 flex-1 flex-col" : "flex-1"}>
        {tab === "conversation" ? (
          <ConversationPane
            imageBase={imageBase}
            conversation={shown}
            rootPath={workspace.rootPath}
            onRewind={canWrite ? setRewindSeq : undefined}
            pages={earlier}
            preview={previewing ? preview : undefined}
            loading={loading}
            failed={subscribeError !== undefined && log.events.length === 0}
            onLoadFull={loadFull}
          />
        ) : null}
        {tab === "changes" ? (
          <>
            <ChangesPanel
              slug={workspace.slug}
              sessionId={sessionId}
              socket={socket ?? undefined}
              refreshKey={changesKey}
              onPrompt={canWrite && !dead ? onPrompt : undefined}
              newCommandId={newCommandId}
            />
            {changesAside}
          </>
        ) : tab === "conversation" ? (
          // The caller's pending approvals of this session, decided here without going to the inbox.
          // (not for a viewer: one demoted while a card waited can no longer decide it)
          canWrite ? <SessionApprovals sessionId={sessionId} /> : null
        ) : (
          <RawLog
            events={log.events}
            downloadHref={`/api/workspaces/${encodeURIComponent(workspace.slug)}/sessions/${encodeURIComponent(sessionId)}/events`}
          />
        )}
      </div>

      {rewindSeq !== undefined && (
        <RewindDialog
          sessionId={sessionId}
          promptSeq={rewindSeq}
          promptText={conversation.items.flatMap((i) => (i.kind === "user" && i.seq === rewindSeq ? [i.text] : []))[0]}
          socket={socket ?? undefined}
          newCommandId={newCommandId}
          onClose={() => setRewindSeq(undefined)}
        />
      )}
      {/* above the conversation's own floating parts ("Jump to latest"), so its menus are not covered */}
      <div className="sticky bottom-0 z-20 -mx-2 bg-zinc-50 px-2 pt-2 pb-4 dark:bg-zinc-950">
        <SessionExtras
          conversation={conversation}
          canWrite={canWrite}
          onStopTask={stopTask}
        />
        <PromptBox
          sessionId={sessionId}
          disabledReason={promptRefusal}
          onSend={onPrompt}
          demoScenarios={demoScenarios}
          autoFocus
          slashCommands={controls.slashCommands}
          suggestFiles={controls.suggestFiles}
          queued={controls.queued}
          onCancelQueued={canWrite ? controls.cancelQueued : undefined}
          running={turnRunning && canStop}
          onStop={stop}
          stopping={stopping}
        />
      </div>
    </div>
  );
}
