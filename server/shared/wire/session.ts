/**
 * The live-session part of the Socket.IO contract. The sidecar validates every command
 * payload with these schemas; the browser imports the types. Every command carries a
 * client-made `commandId`: a retry with the same id returns the first outcome and has no
 * second effect.
 */
import { z } from "zod";
import { ZPromptImages } from "./session-controls";

/** Most characters a prompt may have; longer ones are refused with `invalid_payload`. */
export const maxPromptChars = 1_000_000;

/** Event payloads larger than this (serialized) are sent trimmed; `session:fetch-event` returns them whole. */
export const maxWirePayloadBytes = 64 * 1024;

/** Largest stored payload (characters) `session:fetch-event` returns; larger ones are refused (the download has them). */
export const maxFetchEventChars = 8 * 1024 * 1024;

/**
 * One `session:subscribe` reply holds at most this many events, and (past its first event) at
 * most this many characters of stored payload: the backlog comes in pages, each asked for.
 */
export const subscribePage = { maxEvents: 500, maxChars: 2 * 1024 * 1024 } as const;

export const SessionCommand = {
  create: "session:create",
  subscribe: "session:subscribe",
  unsubscribe: "session:unsubscribe",
  prompt: "session:prompt",
  interrupt: "session:interrupt",
  setMode: "session:set-mode",
  setModel: "session:set-model",
  stop: "session:stop",
  fetchEvent: "session:fetch-event",
  watchWorkspace: "workspace:watch",
} as const;

export const SessionFact = {
  /** One live event of a session (a {@link WireEvent}). */
  event: "session:event",
  /**
   * Several live events of one session, in seq order (a `WireEvent[]`): what one write of the
   * event log committed for it together, such as a burst of streamed deltas, in one message
   * instead of one each. A listener treats it as that many `session:event`s.
   */
  events: "session:events",
  status: "session:status",
  presence: "presence:changed",
} as const;

/**
 * Calls `listener` with each live event a socket receives, whether it came alone
 * (`session:event`) or with others of its session (`session:events`), in the order sent.
 */
export function onSessionEvents(
  socket: { on(name: string, listener: (payload: never) => void): unknown },
  listener: (event: WireEvent) => void,
): void {
  socket.on(SessionFact.event, (event: WireEvent) => listener(event));
  socket.on(SessionFact.events, (events: WireEvent[]) => {
    for (const event of events) listener(event);
  });
}

const ZCommandId = z.string().min(8).max(64);
const ZSessionId = z.string().min(1).max(64);

/** Modes a person may pick; `bypassPermissions` only where the workspace allows it. */
export const ZPermissionModeChoice = z.enum(["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]);
export type PermissionModeChoice = z.infer<typeof ZPermissionModeChoice>;

export const ZCreateSession = z.object({
  workspace: z.string().min(1).max(100),
  mode: ZPermissionModeChoice.default("default"),
  model: z.string().min(1).max(100).optional(),
  /** Per-session cap in USD, passed to the CLI as `--max-budget-usd`. */
  maxBudgetUsd: z.number().positive().max(1_000_000).optional(),
  /** Start in a git worktree of its own, on a new branch (repository workspaces only). */
  worktree: z.boolean().optional(),
  commandId: ZCommandId,
});
export type CreateSession = z.infer<typeof ZCreateSession>;

export const ZSubscribe = z.object({ sessionId: ZSessionId, afterSeq: z.number().int().min(0) });
export type Subscribe = z.infer<typeof ZSubscribe>;

export const ZUnsubscribe = z.object({ sessionId: ZSessionId });

export const ZPrompt = z
  .object({
    sessionId: ZSessionId,
    text: z.string().trim().max(maxPromptChars, `A prompt has at most ${maxPromptChars} characters.`),
    /** Pasted or dropped images, sent to the model as image blocks after the text. */
    images: ZPromptImages.optional(),
    commandId: ZCommandId,
  })
  .refine((p) => p.text.length > 0 || (p.images?.length ?? 0) > 0, { message: "The prompt is empty.", path: ["text"] });
export type Prompt = z.infer<typeof ZPrompt>;

export const ZSessionCommand = z.object({ sessionId: ZSessionId, commandId: ZCommandId });
export type SessionCommandPayload = z.infer<typeof ZSessionCommand>;

export const ZSetMode = z.object({ sessionId: ZSessionId, mode: ZPermissionModeChoice, commandId: ZCommandId });
export type SetMode = z.infer<typeof ZSetMode>;

export const ZSetModel = z.object({ sessionId: ZSessionId, model: z.string().min(1).max(100), commandId: ZCommandId });
export type SetModel = z.infer<typeof ZSetModel>;

export const ZFetchEvent = z.object({ sessionId: ZSessionId, seq: z.number().int().min(1) });

export const ZWatchWorkspace = z.object({ workspace: z.string().min(1).max(100) });

/** Session statuses as browsers see them (the same words as server/domain/session). */
export const sessionStatuses = ["starting", "idle", "running", "awaiting-approval", "stalled", "stopped", "crashed", "dead"] as const;
export type SessionStatus = (typeof sessionStatuses)[number];
/** The statuses of a session a sidecar holds live: its CLI runs, starts, or waits for the next prompt. */
export const liveSessionStatuses = ["starting", "idle", "running", "awaiting-approval", "stalled"] as const satisfies readonly SessionStatus[];
/** The statuses of a session whose CLI has ended (a prompt resumes it, unless it is dead). */
export const endedSessionStatuses = ["stopped", "crashed", "dead"] as const satisfies readonly SessionStatus[];
const liveSessionStatusSet: ReadonlySet<string> = new Set(liveSessionStatuses);
/** True for a status of {@link liveSessionStatuses}. */
export function isLiveSessionStatus(status: string): boolean {
  return liveSessionStatusSet.has(status);
}

/** Kinds of event-log entries. `cli` is a CLI stdout line; the others are user commands or sidecar notes. */
export type WireEventKind =
  | "cli"
  | "cli-bad-line"
  | "stderr"
  | "process"
  | "prompt"
  | "interrupt"
  | "set-mode"
  | "set-model"
  | "stop"
  | "decision"
  /** a turn's file changes (server/shared/wire/changes.ts `TurnChangesEventPayload`) */
  | "changes"
  /** a person reverted a file or a hunk of the session's changes */
  | "revert"
  /** a person rewound the workspace's files to before a prompt (`RewindEventPayload`) */
  | "rewind"
  | "set-thinking"
  | "cancel-queued";

/** One event-log entry as browsers see it. */
export interface WireEvent {
  sessionId: string;
  seq: number;
  kind: WireEventKind;
  /** The parsed JSON payload (for `cli`, the CLI's object), or a trimmed preview when `trimmed`. */
  payload: unknown;
  /** True when the payload was too large to send; fetch the rest with `session:fetch-event`. */
  trimmed: boolean;
  /** Who sent it, for user commands. */
  user?: { id: string; name: string };
  at: string;
}

/** A session as lists and headers show it. */
export interface SessionView {
  id: string;
  workspaceId: string;
  workspaceSlug: string;
  title: string | null;
  status: SessionStatus;
  mode: string;
  model: string | null;
  createdBy: { id: string; name: string };
  createdAt: string;
  lastSeq: number;
  costUsd: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** bypassPermissions may be chosen (the workspace enabled it and the process allows it). */
  bypassAvailable: boolean;
  /** When the session was archived; absent when it is not. */
  archivedAt?: string;
}

/**
 * Reply to `session:subscribe`: one page of the backlog. With `reset`, drop what you hold and
 * take `events` as the start of the log. With `hasMore`, this socket is not yet in the
 * session's room: subscribe again with `afterSeq: nextAfterSeq` for the next page. The last
 * page (`hasMore: false`) joins the room in the same tick as its ack, so every event after
 * it arrives live, none twice, none missing.
 */
export interface SubscribeResult {
  session: SessionView;
  events: WireEvent[];
  reset: boolean;
  viewers: Viewer[];
  hasMore: boolean;
  /** The seq to subscribe after for the next page (the last seq this reply covers). */
  nextAfterSeq: number;
}

export interface Viewer {
  userId: string;
  name: string;
}

/** `presence:changed` payload. */
export interface PresenceChanged {
  sessionId: string;
  viewers: Viewer[];
}

/** Reply to `session:prompt`, `session:interrupt` and `session:stop`: the command's event in the log. */
export interface CommandAccepted {
  seq: number;
}

/** Reply to `session:set-mode`: the mode the CLI confirmed (or, with no live CLI, the mode the next one starts in). */
export interface SetModeResult {
  seq: number;
  mode: string;
}

/** Reply to `session:set-model`: the model the CLI confirmed (or the one the next CLI starts with). */
export interface SetModelResult {
  seq: number;
  model: string;
}

/** Reply to `workspace:watch`: the workspace, and the sessions this sidecar holds live. */
export interface WatchWorkspaceResult {
  workspaceId: string;
  sessions: SessionView[];
}
