"use client";

import Link from "next/link";
import { flushSync } from "react-dom";
import { memo, useCallback, useEffect, useMemo, useReducer, useRef, useState, type ReactNode } from "react";
import type { Ack } from "@/server/shared/wire/ack";
import type {
  PermissionModeChoice,
  PresenceChanged,
  SessionView as SessionInfo,
  SetModelResult,
  SetModeResult,
  SubscribeResult,
  Viewer,
  WireEvent,
} from "@/server/shared/wire/session";
import { buildConversation, type Conversation, type ConversationItem } from "./conversation";
import { ConversationPreview } from "./conversation-preview";
import { IncrementalConversation } from "./incremental-conversation";
import { ConversationList, type ConversationRow } from "./conversation-list";
import { tailAfterSeq, useEarlierPages, type EarlierPages } from "./conversation-pages";
import { formatDuration, formatRelative, formatTokens, formatUsd, sessionTitle } from "./format";
import { Markdown } from "./markdown";
import { modeChoices, modeLabel } from "./modes";
import { PromptBox, type DemoScenarioHint, type OutgoingImage } from "./prompt/prompt-box";
import { ContextMeter, ModelPicker, ThinkingSelect } from "./prompt/session-controls-bar";
import { useSessionControls } from "./prompt/use-session-controls";
import { SessionMcpStatus } from "./session-mcp-status";
import { createFrameBatcher } from "./frame-batcher";
import { emptySessionLog, hasGap, reduceSessionLog } from "./session-log";
import { StatusBadge } from "./status-badge";
import { SessionManage } from "./session-manage";
import type { SessionRemoved } from "@/server/shared/wire/session-manage";
import { ToolCard } from "./tool-card";
import { BackgroundTasks } from "./tools/background-tasks";
import { SubagentContext } from "./tools/subagent";
import { PinnedTodos } from "./tools/todo-list";
import { latestTodos, nestSubagents, readBackgroundTasks } from "./tools/tool-data";
import { SessionApprovals } from "@/components/approval/session-approvals";
import { markLatency } from "./latency-marks";
import { ChangesPanel, RawLog, RewindDialog } from "./session-panels-lazy";
import { ConnectionNotice, useSocket } from "./use-socket";
import { PromptImages } from "./prompt/prompt-images";
import { ackMessage, command, emitCommand, fact, manageCommand, newCommandId, type CommandName } from "./wire-client";

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

type StatusFact = Partial<SessionInfo> & { sessionId?: string };

const activeStatuses = new Set(["running", "awaiting-approval", "stalled", "starting"]);

/** One live session: conversation, prompt box, controls, presence and the raw log. */
export function SessionView({ workspace, initialSession, initialTail, currentUser, demoScenarios, changesAside }: SessionViewProps) {
  const sessionId = initialSession.id;
  const state = useSocket();
  const { socket } = state;
  const [log, dispatch] = useReducer(reduceSessionLog, emptySessionLog);
  const [info, setInfo] = useState(initialSession);
  const [viewers, setViewers] = useState<Viewer[]>([]);
  const [subscribed, setSubscribed] = useState(false);
  const [subscribeError, setSubscribeError] = useState<string>();
  const [loadFullError, setLoadFullError] = useState<string>();
  const [tab, setTab] = useState<"conversation" | "raw" | "changes">("conversation");
  const [rewindSeq, setRewindSeq] = useState<number>();
  const [mode, setMode] = useState({ value: initialSession.mode, seq: 0 });
  const [removed, setRemoved] = useState<SessionRemoved & { archived?: boolean }>();
  const logRef = useRef(log);
  const resubscribe = useRef<() => void>(() => undefined);
  // A long log opens at its tail; earlier pages load on scroll up (conversation-pages.ts).
  const tailFrom = useRef(tailAfterSeq(initialSession.lastSeq));

  useEffect(() => {
    logRef.current = log;
  }, [log]);

  // Subscribe on every (re)connect, from the last seq held without a gap; facts that overlap
  // the reply are dropped by the reducer (keyed by seq), so nothing shows twice.
  useEffect(() => {
    if (!socket) return;
    let alive = true;
    let inFlight = false;
    let again = false;
    // Live facts are applied once per frame (a streamed reply is a message per delta), rendered
    // at once in the frame's rAF, so that frame draws them: a plain dispatch there would render
    // in a task after the frame and show a frame later.
    const live = createFrameBatcher<WireEvent>((events) => flushSync(() => dispatch({ type: "events", events })));
    const subscribe = async () => {
      if (inFlight) {
        again = true;
        return;
      }
      inFlight = true;
      do {
        again = false;
        // A long backlog comes in pages; each page but the last leaves this socket out of the
        // session's room, so the next page starts where this one ended (the log may not have
        // re-rendered yet), and the last page brings the live stream with it.
        let afterSeq = logRef.current.events.length === 0 ? tailFrom.current : logRef.current.contiguousSeq;
        const from = afterSeq;
        for (;;) {
          const ack = await emitCommand<SubscribeResult>(socket, command.subscribe, { sessionId, afterSeq });
          if (!alive) return;
          if (!ack.ok) {
            setSubscribeError(ackMessage(ack));
            break;
          }
          // the facts held so far go first, as they came first
          live.flush();
          dispatch({ type: "snapshot", events: ack.data.events, reset: ack.data.reset, from });
          setInfo(ack.data.session);
          setViewers(ack.data.viewers);
          setSubscribeError(undefined);
          if (!ack.data.hasMore) {
            setSubscribed(true);
            break;
          }
          afterSeq = ack.data.nextAfterSeq;
        }
      } while (again && alive);
      inFlight = false;
    };
    resubscribe.current = () => void subscribe();
    const onConnect = () => void subscribe();
    const onDisconnect = () => setSubscribed(false);
    const onEvent = (event: WireEvent) => {
      if (event.sessionId !== sessionId) return;
      markLatency("event-received", event.seq);
      live.push(event);
    };
    const onStatus = (payload: StatusFact) => {
      const id = payload.id ?? payload.sessionId;
      if (id !== sessionId) return;
      const { sessionId: _omit, ...fields } = payload;
      setInfo((current) => ({ ...current, ...fields, id: sessionId }));
    };
    const onPresence = (payload: PresenceChanged) => {
      if (payload.sessionId === sessionId) setViewers(payload.viewers);
    };
    socket.on("connect", onConnect);
    socket.on("disconnect", onDisconnect);
    socket.on(fact.event, onEvent);
    socket.on(fact.status, onStatus);
    socket.on(fact.presence, onPresence);
    const onRemoved = (payload: SessionRemoved & { archived?: boolean }) => {
      if (payload.sessionId === sessionId) setRemoved(payload);
    };
    socket.on("session:removed", onRemoved);
    if (socket.connected) void subscribe();
    return () => {
      alive = false;
      live.cancel();
      resubscribe.current = () => undefined;
      socket.off("connect", onConnect);
      socket.off("disconnect", onDisconnect);
      socket.off(fact.event, onEvent);
      socket.off(fact.status, onStatus);
      socket.off(fact.presence, onPresence);
      socket.off("session:removed", onRemoved);
      if (socket.connected) socket.emit(command.unsubscribe, { sessionId });
    };
  }, [socket, sessionId]);

  // A fact after a gap means events were missed (or are still in the subscribe reply):
  // give the reply a moment, then ask for what follows the gap.
  useEffect(() => {
    if (!hasGap(log)) return;
    const t = setTimeout(() => resubscribe.current(), 400);
    return () => clearTimeout(t);
  }, [log]);

  // only the events appended since the last render are folded; unchanged items keep their identity
  const [incremental] = useState(() => new IncrementalConversation());
  const conversation = useMemo(() => incremental.update(log.events), [incremental, log.events]);
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

  const canWrite = workspace.role !== "viewer";
  const dead = info.status === "dead";
  const promptRefusal = !canWrite
    ? "You are a viewer in this workspace: you can watch this session but not prompt it. Ask an owner for the editor role."
    : dead
      ? "This session is dead: its CLI could not be restarted. Start a new session from the workspace page."
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

  const onPrompt = useCallback(
    async (text: string, images: OutgoingImage[] = []) => {
      const ack = await send(command.prompt, images.length > 0 ? { text, images } : { text });
      markLatency("prompt-acked");
      return ackMessage(ack);
    },
    [send],
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
  const stopTask = useCallback(async (taskId: string) => ackMessage(await send(manageCommand.stopTask, { taskId })), [send]);

  return (
    <div
      data-testid="session-view"
      data-session-id={sessionId}
      // while the picture of the last screen shows, the page is one screen tall: the picture
      // takes what the header and the prompt box leave, its end right above the prompt box
      className={`flex flex-col gap-3 ${previewing ? "h-[calc(100vh-8rem)]" : "min-h-[calc(100vh-8rem)]"}`}
    >
      <header className="space-y-2">
        <nav aria-label="Breadcrumb" className="text-xs text-zinc-500">
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
              active={activeStatuses.has(info.status)}
              onStop={interrupt}
            />
            <SessionManage
              sessionId={sessionId}
              slug={workspace.slug}
              title={sessionTitle(info, earlier.more ? undefined : conversation.firstPrompt)}
              role={workspace.role}
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
            <button type="button" className="font-medium underline" onClick={() => resubscribe.current()}>
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

      <div
        role="tablist"
        aria-label="Session views"
        className="flex gap-1 border-b border-zinc-200 text-sm dark:border-zinc-800"
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

      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className={previewing ? "flex min-h-0 flex-1 flex-col" : "flex-1"}>
        {tab === "conversation" ? (
          <ConversationPane
            imageBase={imageBase}
            conversation={conversation}
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
          <SessionApprovals sessionId={sessionId} />
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
          socket={socket ?? undefined}
          newCommandId={newCommandId}
          onClose={() => setRewindSeq(undefined)}
        />
      )}
      <div className="sticky bottom-0 -mx-2 bg-zinc-50 px-2 pt-2 pb-4 dark:bg-zinc-950">
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
        />
      </div>
    </div>
  );
}

function TabButton({
  id,
  testId,
  active,
  onSelect,
  children,
}: {
  id: string;
  testId?: string;
  active: boolean;
  onSelect: () => void;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      role="tab"
      id={`tab-${id}`}
      data-testid={testId}
      aria-selected={active}
      aria-controls={`panel-${id}`}
      tabIndex={active ? 0 : -1}
      onClick={onSelect}
      className={`-mb-px border-b-2 px-3 py-1.5 font-medium focus-visible:outline-2 focus-visible:outline-indigo-500 ${
        active
          ? "border-indigo-500 text-zinc-900 dark:text-zinc-100"
          : "border-transparent text-zinc-500 hover:text-zinc-800 dark:hover:text-zinc-200"
      }`}
    >
      {children}
    </button>
  );
}

const Presence = memo(function Presence({ others }: { others: Viewer[] }) {
  return (
    <div
      data-testid="presence"
      data-count={others.length}
      className="flex items-center gap-1.5 text-xs text-zinc-500"
      aria-label="Who else is viewing"
    >
      {others.length === 0 ? (
        <span>Only you</span>
      ) : (
        <>
          <div className="flex -space-x-1.5">
            {others.slice(0, 5).map((v) => (
              <span
                key={v.userId}
                data-testid="presence-viewer"
                title={v.name}
                className={`inline-flex size-6 items-center justify-center rounded-full text-[10px] font-semibold ring-2 ring-zinc-50 dark:ring-zinc-950 ${avatarColour(v.name)}`}
              >
                {initials(v.name)}
              </span>
            ))}
          </div>
          <span className="max-w-48 truncate">
            {others.map((v) => v.name).join(", ")} {others.length === 1 ? "is" : "are"} here
          </span>
        </>
      )}
    </div>
  );
});

const avatarColours = [
  "bg-indigo-600 text-white",
  "bg-emerald-600 text-white",
  "bg-sky-600 text-white",
  "bg-fuchsia-600 text-white",
  "bg-amber-600 text-white",
  "bg-rose-600 text-white",
  "bg-teal-600 text-white",
  "bg-violet-600 text-white",
];

/** A stable colour per person, so a shared conversation shows who said what at a glance. */
function avatarColour(name: string): string {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return avatarColours[h % avatarColours.length]!;
}

function initials(name: string): string {
  const parts = name
    .trim()
    .split(/[\s@._-]+/)
    .filter(Boolean);
  return ((parts[0]?.[0] ?? "?") + (parts[1]?.[0] ?? "")).toUpperCase();
}

const ModeSwitcher = memo(function ModeSwitcher(props: {
  mode: string;
  bypassAvailable: boolean;
  disabledReason?: string;
  onSwitch: (mode: PermissionModeChoice) => Promise<string | undefined>;
}) {
  const { mode, bypassAvailable, disabledReason, onSwitch } = props;
  const [pending, setPending] = useState<PermissionModeChoice>();
  const [error, setError] = useState<string>();
  const choices = modeChoices(bypassAvailable);
  const known = choices.some((c) => c.value === mode);
  return (
    <div className="relative flex items-center gap-1.5">
      <label htmlFor="mode-select" className="text-xs text-zinc-500">
        Mode
      </label>
      <select
        id="mode-select"
        data-testid="mode-select"
        data-pending={pending ?? ""}
        value={mode}
        disabled={disabledReason !== undefined || pending !== undefined}
        title={disabledReason ?? choices.find((c) => c.value === mode)?.hint}
        aria-describedby={error ? "mode-error" : undefined}
        onChange={async (e) => {
          const next = e.target.value as PermissionModeChoice;
          if (next === mode) return;
          setPending(next);
          setError(undefined);
          const failure = await onSwitch(next);
          setPending(undefined);
          if (failure) setError(failure);
        }}
        className="field w-auto py-1 pr-7 text-xs disabled:cursor-not-allowed disabled:opacity-60"
      >
        {!known && <option value={mode}>{modeLabel(mode)}</option>}
        {choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {pending && (
        <span role="status" data-testid="mode-pending" className="text-xs whitespace-nowrap text-zinc-500">
          switching to {modeLabel(pending)}…
        </span>
      )}
      {error && (
        <span
          id="mode-error"
          role="alert"
          data-testid="mode-error"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});

const StopButton = memo(function StopButton({
  canWrite,
  active,
  onStop,
}: {
  canWrite: boolean;
  active: boolean;
  onStop: () => Promise<string | undefined>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <div className="relative">
      <button
        type="button"
        data-testid="interrupt-button"
        className="btn-quiet py-1 text-xs"
        disabled={!canWrite || !active || busy}
        title={!canWrite ? "Viewers cannot stop a turn." : active ? "Interrupt the running turn" : "Nothing is running"}
        aria-describedby={error ? "interrupt-error" : undefined}
        onClick={async () => {
          setBusy(true);
          setError(undefined);
          const failure = await onStop();
          setBusy(false);
          if (failure) setError(failure);
        }}
      >
        <span aria-hidden className="size-2 rounded-[2px] bg-current" />
        {busy ? "Interrupting…" : "Interrupt"}
      </button>
      {error && (
        <span
          id="interrupt-error"
          role="alert"
          data-testid="interrupt-error"
          className="absolute top-full right-0 z-10 mt-1 w-64 rounded-md bg-red-50 px-2 py-1 text-xs text-red-800 shadow dark:bg-red-950 dark:text-red-300"
        >
          {error}
        </span>
      )}
    </div>
  );
});

/** The latest checklist and the background tasks, pinned above the prompt box. */
const SessionExtras = memo(function SessionExtras({
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

const ConversationPane = memo(function ConversationPane(props: {
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
      nested.top.map((item) => ({
        key: item.key,
        deps: [item, rootPath, onLoadFull, onRewind, imageBase],
        render: () => (
          <ConversationItemView item={item} rootPath={rootPath} onLoadFull={onLoadFull} onRewind={onRewind} imageBase={imageBase} />
        ),
      })),
    [nested, rootPath, onLoadFull, onRewind, imageBase],
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
          conversation.partials.length > 0 && (
            <ol className="space-y-3 pb-3" aria-label="Streaming reply" aria-live="polite" aria-busy="true">
              {conversation.partials.map((p) => (
                <li key={`partial-${p.key}`}>
                  <AssistantBubble streaming>
                    <Markdown text={p.text} streaming />
                  </AssistantBubble>
                </li>
              ))}
            </ol>
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
        className={`mt-0.5 inline-flex size-6 shrink-0 items-center justify-center rounded-md bg-orange-100 text-[11px] font-bold text-orange-700 dark:bg-orange-900/50 dark:text-orange-300 ${streaming ? "animate-pulse" : ""}`}
      >
        C
      </span>
      <div className="min-w-0 flex-1">
        <span className="sr-only">Claude{subagent ? " (subagent)" : ""}: </span>
        {subagent && <div className="mb-0.5 text-[11px] text-zinc-500">subagent</div>}
        {children}
        {streaming && <div className="mt-1 text-[11px] text-zinc-400">writing…</div>}
        {aborted && <div className="mt-1 text-xs text-zinc-500 italic">(cut short by an interrupt)</div>}
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
        <div data-testid="message-user" data-author={item.author} className="flex gap-3">
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
                {formatRelative(item.at)}
              </span>
              {onRewind && (
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
