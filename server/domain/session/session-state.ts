import type { CliMessage, ResultMessage } from "@/server/shared/claude-protocol/messages";

/**
 * The life of one Conduit session's CLI child, as a pure reducer: no I/O, no timers, the
 * clock passed in as `now` (milliseconds). The supervisor feeds it what happened; the UI and
 * the supervisor read `status` and the bookkeeping next to it.
 *
 * Two facts shape it (protocol reference §7, §13):
 * - sends are not 1:1 with results. Queued prompts coalesce into one turn, a prompt sent
 *   during a tool is folded into the running turn, and background subagents start turns
 *   nobody asked for. Prompts are therefore tracked by uuid and cleared by what the CLI says
 *   (`user_message_uuids` on the result, `command_lifecycle` frames), never by counting.
 * - `awaiting-approval` follows pending approvals, not turns: a subagent can ask for
 *   permission after its parent turn's result.
 */

/** Session statuses. */
export const SessionStatus = {
  /** No process yet: first spawn in progress, or a restart is scheduled. */
  starting: "starting",
  /** Process up, nothing pending. */
  idle: "idle",
  /** A turn runs or prompts wait for one. */
  running: "running",
  /** At least one `can_use_tool` waits for a person. The CLI is blocked until answered. */
  awaitingApproval: "awaiting-approval",
  /** Running, but the CLI has been silent longer than the watchdog allows. */
  stalled: "stalled",
  /** The process ended as asked (stop, cull); a new prompt resumes it. */
  stopped: "stopped",
  /** The process ended unexpectedly; a restart may follow. */
  crashed: "crashed",
  /** Restarts exhausted; the session takes no more prompts. */
  dead: "dead",
} as const;

/** One of {@link SessionStatus}. */
export type SessionStatus = (typeof SessionStatus)[keyof typeof SessionStatus];

/** A prompt written to stdin and not yet answered by a `result`. */
export interface PendingPrompt {
  uuid: string;
  sentAt: number;
  /** `sent` until the CLI reports `command_lifecycle` progress for it. */
  phase: "sent" | "queued" | "started";
}

/** A `can_use_tool` request waiting for a decision. */
export interface PendingApproval {
  requestId: string;
  toolName: string;
  requestedAt: number;
}

/** The turn in progress (between `system/init` and `result`). */
export interface TurnInfo {
  startedAt: number;
  /** Prompts this turn is known to answer so far. */
  promptUuids: readonly string[];
  /** Started by the CLI itself (background subagent finished), with no prompt. */
  unsolicited: boolean;
}

/** The last finished turn. */
export interface LastTurn {
  endedAt: number;
  /** Prompts the result answered (empty for unsolicited turns). */
  promptUuids: readonly string[];
  isError: boolean;
  subtype: string;
  unsolicited: boolean;
}

/** How a process ended. */
export interface ProcessExit {
  at: number;
  code: number | null;
  signal: string | null;
  /** Asked for (stop, cull, stdin closed by us) rather than a crash. */
  expected: boolean;
}

/** Bookkeeping present in every status. */
export interface SessionCore {
  /** From `system/init`; null before the first turn and between `/clear` and the next init. */
  claudeSessionId: string | null;
  /** Earlier ids of this session (`/clear`, fork), oldest first. */
  previousClaudeSessionIds: readonly string[];
  model: string | null;
  permissionMode: string | null;
  pendingPrompts: readonly PendingPrompt[];
  pendingApprovals: readonly PendingApproval[];
  turn: TurnInfo | null;
  lastTurn: LastTurn | null;
  /** Restarts since the last completed turn; the supervisor compares it with its budget. */
  consecutiveRestarts: number;
  /** A process exists (spawned and not yet exited). */
  processRunning: boolean;
  stopRequestedAt: number | null;
  /** Last CLI output, prompt write or approval decision: the silence watchdog's reference. */
  lastActivityAt: number;
  /** When `status` last changed. */
  since: number;
}

/** The session state: a discriminated union on `status`. */
export type SessionState =
  | (SessionCore & { status: "starting"; restartAttempt: number; restartAt: number | null })
  | (SessionCore & { status: "idle" })
  | (SessionCore & { status: "running" })
  | (SessionCore & { status: "awaiting-approval" })
  | (SessionCore & { status: "stalled"; silentSince: number })
  | (SessionCore & { status: "stopped"; exit: ProcessExit | null })
  | (SessionCore & { status: "crashed"; exit: ProcessExit; lostPromptUuids: readonly string[] })
  | (SessionCore & { status: "dead"; exit: ProcessExit | null; reason: string });

/** What can happen to a session. */
export type SessionEvent =
  /** The CLI child is up. `claudeSessionId` when known up front (`--resume`, `--session-id`). */
  | { type: "process-spawned"; claudeSessionId?: string }
  /** A decoded stdout line. Feed the exit only after stdout has closed, so no line trails it. */
  | { type: "message"; message: CliMessage }
  /** A user message with this uuid was written to stdin. */
  | { type: "prompt-sent"; uuid: string }
  | { type: "approval-requested"; requestId: string; toolName: string }
  | { type: "approval-resolved"; requestId: string }
  /** Withdrawn by the CLI (interrupt) or expired. */
  | { type: "approval-cancelled"; requestId: string }
  | { type: "silence-watchdog-fired" }
  | { type: "process-exited"; code: number | null; signal: string | null; expected: boolean }
  | { type: "restart-scheduled"; delayMs: number }
  | { type: "restart-budget-exhausted" }
  | { type: "stop-requested" };

/** A fresh session, before its first spawn. */
export function createSessionState(now: number): SessionState {
  return {
    status: "starting",
    restartAttempt: 0,
    restartAt: null,
    claudeSessionId: null,
    previousClaudeSessionIds: [],
    model: null,
    permissionMode: null,
    pendingPrompts: [],
    pendingApprovals: [],
    turn: null,
    lastTurn: null,
    consecutiveRestarts: 0,
    processRunning: false,
    stopRequestedAt: null,
    lastActivityAt: now,
    since: now,
  };
}

/** True while a process is up and accepting prompts. */
export function isLive(state: SessionState): boolean {
  return (
    state.status === "idle" ||
    state.status === "running" ||
    state.status === "awaiting-approval" ||
    state.status === "stalled"
  );
}

/**
 * Applies one event. An event that does not apply to the current status (a prompt to a dead
 * session, a second spawn) returns the very same state object, so callers can tell.
 */
export function reduceSessionState(state: SessionState, event: SessionEvent, now: number): SessionState {
  if (state.status === "dead") return state;
  switch (event.type) {
    case "process-spawned":
      return onSpawned(state, event.claudeSessionId, now);
    case "message":
      return isLive(state) ? onMessage(state, event.message, now) : state;
    case "prompt-sent": {
      if (!isLive(state) || state.pendingPrompts.some((p) => p.uuid === event.uuid)) return state;
      const prompt: PendingPrompt = { uuid: event.uuid, sentAt: now, phase: "sent" };
      return settle(
        state,
        { ...core(state), pendingPrompts: [...state.pendingPrompts, prompt], lastActivityAt: now },
        now,
        false,
      );
    }
    case "approval-requested": {
      if (!isLive(state) || state.pendingApprovals.some((a) => a.requestId === event.requestId)) return state;
      const approval: PendingApproval = { requestId: event.requestId, toolName: event.toolName, requestedAt: now };
      return settle(
        state,
        { ...core(state), pendingApprovals: [...state.pendingApprovals, approval], lastActivityAt: now },
        now,
        false,
      );
    }
    case "approval-resolved":
    case "approval-cancelled": {
      if (!isLive(state) || !state.pendingApprovals.some((a) => a.requestId === event.requestId)) return state;
      const pendingApprovals = state.pendingApprovals.filter((a) => a.requestId !== event.requestId);
      // The CLI resumes work now; restart the silence clock.
      return settle(state, { ...core(state), pendingApprovals, lastActivityAt: now }, now, false);
    }
    case "silence-watchdog-fired":
      if (state.status !== "running") return state;
      return { ...core(state), status: "stalled", silentSince: state.lastActivityAt, since: now };
    case "process-exited":
      return onExited(state, event, now);
    case "restart-scheduled":
      if (state.status !== "crashed") return state;
      return {
        ...core(state),
        status: "starting",
        restartAttempt: state.consecutiveRestarts + 1,
        restartAt: now + event.delayMs,
        consecutiveRestarts: state.consecutiveRestarts + 1,
        since: now,
      };
    case "restart-budget-exhausted": {
      if (state.status !== "crashed" && state.status !== "starting") return state;
      if (state.processRunning) return state;
      const exit = state.status === "crashed" ? state.exit : null;
      return {
        ...core(state),
        status: "dead",
        exit,
        reason: `the CLI crashed again after ${state.consecutiveRestarts} restarts in a row (the restart budget), so it is not restarted any more`,
        since: now,
      };
    }
    case "stop-requested":
      if (state.stopRequestedAt !== null && state.processRunning) return state;
      if (!state.processRunning) {
        if (state.status === "stopped") return state;
        const exit = state.status === "crashed" ? state.exit : null;
        return { ...core(state), status: "stopped", exit, stopRequestedAt: now, since: now };
      }
      return { ...state, stopRequestedAt: now };
  }
}

function onSpawned(state: SessionState, claudeSessionId: string | undefined, now: number): SessionState {
  if (state.processRunning) return state;
  return {
    ...core(state),
    status: "idle",
    claudeSessionId: claudeSessionId ?? state.claudeSessionId,
    pendingPrompts: [],
    pendingApprovals: [],
    turn: null,
    processRunning: true,
    stopRequestedAt: null,
    lastActivityAt: now,
    since: now,
  };
}

function onExited(
  state: SessionState,
  event: Extract<SessionEvent, { type: "process-exited" }>,
  now: number,
): SessionState {
  if (!state.processRunning) return state;
  const expected = event.expected || state.stopRequestedAt !== null;
  const exit: ProcessExit = { at: now, code: event.code, signal: event.signal, expected };
  const cleared = {
    ...core(state),
    pendingPrompts: [],
    pendingApprovals: [],
    turn: null,
    processRunning: false,
    since: now,
  };
  if (expected) return { ...cleared, status: "stopped", exit };
  // Prompts in flight are not replayed after a restart: the resumed conversation decides.
  const lostPromptUuids = state.pendingPrompts.map((p) => p.uuid);
  return { ...cleared, status: "crashed", exit, lostPromptUuids };
}

function onMessage(state: SessionState, message: CliMessage, now: number): SessionState {
  const next: SessionCore = { ...core(state), lastActivityAt: now };
  switch (message.type) {
    case "system":
      if (message.subtype === "init") {
        adoptSessionId(next, message.session_id);
        next.model = message.model;
        next.permissionMode = message.permissionMode;
        if (next.turn === null) next.turn = startTurn(next, now);
      } else if (message.subtype === "status" && typeof message.permissionMode === "string") {
        next.permissionMode = message.permissionMode;
      }
      break;
    case "conversation_reset":
      // The frame still carries the old id; the new one arrives with the next system/init.
      if (next.claudeSessionId !== null) {
        next.previousClaudeSessionIds = [...next.previousClaudeSessionIds, next.claudeSessionId];
      }
      next.claudeSessionId = null;
      break;
    case "command_lifecycle":
      applyLifecycle(next, message.command_uuid, message.state);
      break;
    case "result":
      endTurn(next, message, now);
      break;
    default:
      break;
  }
  return settle(state, next, now, true);
}

function adoptSessionId(next: SessionCore, sessionId: string): void {
  if (next.claudeSessionId === sessionId) return;
  if (next.claudeSessionId !== null) {
    next.previousClaudeSessionIds = [...next.previousClaudeSessionIds, next.claudeSessionId];
  }
  next.claudeSessionId = sessionId;
}

function startTurn(next: SessionCore, now: number): TurnInfo {
  const started = next.pendingPrompts.filter((p) => p.phase === "started").map((p) => p.uuid);
  // A prompt with a uuid is always "started" before its turn's init. One still in "sent" got no
  // lifecycle frames at all (no uuid, or an older CLI), so this turn is presumably its.
  const unsolicited = started.length === 0 && !next.pendingPrompts.some((p) => p.phase === "sent");
  return { startedAt: now, promptUuids: started, unsolicited };
}

function applyLifecycle(
  next: SessionCore,
  uuid: string,
  lifecycle: "queued" | "started" | "completed" | "cancelled",
): void {
  const index = next.pendingPrompts.findIndex((p) => p.uuid === uuid);
  if (index === -1) return;
  if (lifecycle === "completed" || lifecycle === "cancelled") {
    next.pendingPrompts = next.pendingPrompts.filter((p) => p.uuid !== uuid);
    return;
  }
  const prompts = [...next.pendingPrompts];
  const prompt = prompts[index];
  if (prompt === undefined) return;
  prompts[index] = { ...prompt, phase: lifecycle };
  next.pendingPrompts = prompts;
  // A prompt started during a running turn is folded into it (sent while a tool ran).
  if (lifecycle === "started" && next.turn !== null && !next.turn.promptUuids.includes(uuid)) {
    next.turn = { ...next.turn, promptUuids: [...next.turn.promptUuids, uuid], unsolicited: false };
  }
}

function endTurn(next: SessionCore, result: ResultMessage, now: number): void {
  const turn = next.turn ?? startTurn(next, now);
  const oldestUnacknowledged = next.pendingPrompts.find((p) => p.phase === "sent");
  let answered: string[];
  if (Array.isArray(result.user_message_uuids) && result.user_message_uuids.length > 0) {
    answered = result.user_message_uuids.filter((u): u is string => typeof u === "string");
  } else if (typeof result.user_message_uuid === "string") {
    answered = [result.user_message_uuid];
  } else if (turn.promptUuids.length > 0) {
    answered = [...turn.promptUuids];
  } else if (!turn.unsolicited && oldestUnacknowledged !== undefined) {
    // No ids anywhere: the oldest prompt the CLI never acknowledged is the best guess.
    answered = [oldestUnacknowledged.uuid];
  } else {
    answered = [];
  }
  const done = new Set(answered);
  next.pendingPrompts = next.pendingPrompts.filter((p) => !done.has(p.uuid));
  next.lastTurn = {
    endedAt: now,
    promptUuids: answered,
    isError: result.is_error,
    subtype: result.subtype,
    unsolicited: answered.length === 0,
  };
  next.turn = null;
  // A finished turn proves the process healthy: the restart budget counts crashes in a row.
  next.consecutiveRestarts = 0;
}

/** Recomputes the live status from the bookkeeping. `activity` clears a stall. */
function settle(previous: SessionState, next: SessionCore, now: number, activity: boolean): SessionState {
  if (previous.status === "stalled" && !activity) {
    return { ...next, status: "stalled", silentSince: previous.silentSince };
  }
  const status: "idle" | "running" | "awaiting-approval" =
    next.pendingApprovals.length > 0
      ? "awaiting-approval"
      : next.turn !== null || next.pendingPrompts.length > 0
        ? "running"
        : "idle";
  const since = status === previous.status ? previous.since : now;
  return { ...next, status, since };
}

/** The shared fields of a state, without the status-specific ones. */
function core(state: SessionState): SessionCore {
  return {
    claudeSessionId: state.claudeSessionId,
    previousClaudeSessionIds: state.previousClaudeSessionIds,
    model: state.model,
    permissionMode: state.permissionMode,
    pendingPrompts: state.pendingPrompts,
    pendingApprovals: state.pendingApprovals,
    turn: state.turn,
    lastTurn: state.lastTurn,
    consecutiveRestarts: state.consecutiveRestarts,
    processRunning: state.processRunning,
    stopRequestedAt: state.stopRequestedAt,
    lastActivityAt: state.lastActivityAt,
    since: state.since,
  };
}
