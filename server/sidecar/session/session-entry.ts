/**
 * One session as the hub holds it in memory (`SessionEntry`), how an entry is made from its row,
 * and the view the socket layer sends of it.
 *
 * Owns: the shape of an entry, its initial values, `viewOf`, and the small checks every command
 * makes of an entry (`assertNotDead`). Must not: read or write the database, start runners, or
 * tell anyone anything; the hub's parts do that with the entries this module describes.
 */
import type { SessionRow, WorkspaceAccess } from "@/server/db/sessions";
import { createCostState, type CostState, type PreviousExit } from "@/server/domain/cost/cost-reducer";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { endedSessionStatuses, isLiveSessionStatus, liveSessionStatuses, type SessionStatus, type SessionView, type WireEvent } from "@/server/shared/wire/session";
import { changeRootOf } from "@/server/workspace-agent";
import { CommandMemo } from "./command-memo";
import type { SessionRunner } from "./session-runner-contract";
import type { SnapshotSession } from "./turn-snapshots";

export type Tokens = SessionView["tokens"];

export interface SessionEntry {
  id: string;
  workspace: WorkspaceAccess["workspace"];
  /** The session's own git worktree (the CLI's cwd), or null for the workspace root. */
  worktreePath: string | null;
  claudeSessionId: string;
  createdBy: { id: string; name: string };
  createdAt: Date;
  title: string | null;
  status: SessionStatus;
  mode: string;
  model: string | null;
  pid: number | null;
  costUsd: number;
  tokens: Tokens;
  /** Result uuids already counted in `tokens`. */
  countedResults: Set<string>;
  /** A turn finished (a `result` is in the log): the CLI saved the conversation, a new child resumes it. */
  conversationStarted: boolean;
  runner: SessionRunner | undefined;
  /** Whether the current (or next) child was started with --allow-dangerously-skip-permissions. */
  runnerAllowsBypass: boolean;
  runnerStarting: Promise<SessionRunner> | undefined;
  detachRunner: (() => void) | undefined;
  /** Commands by client-made id: a retry gets this same promise. */
  commands: CommandMemo<{ kind: string; outcome: Promise<unknown> }>;
  /** Subscribers catching up: each collects the events stored while it reads the backlog. */
  captures: Set<WireEvent[]>;
  /** The highest seq listeners have been told about. */
  lastNotifiedSeq: number;
  /** The last append: status facts wait for it, so a view never runs ahead of the events. */
  tail: Promise<unknown>;
  rowDirty: boolean;
  rowWriting: Promise<void> | undefined;
  /** Ends the wait of a pending row write at once (a pid change, shutdown). */
  rowFlush: (() => void) | undefined;
  /** The live fields last written, and when: unchanged fields are not written again soon. */
  rowWritten: { key: string; pid: number | null; at: number } | undefined;
  /** The cost reducer of this session's process lineage. */
  cost: CostState;
  /** How the last child ended; null before any exit this sidecar saw (a restart counts as a crash). */
  lastExit: PreviousExit | null;
  /** Prompt uuid → who sent it, so a turn is charged to the person whose prompt started it. */
  promptSenders: Map<string, string>;
  /** Cost writes in result order; the session total is re-read after each. */
  costChain: Promise<void>;
  /** --max-budget-usd for this session's children. */
  maxBudgetUsd: number | null;
  /** Texts for the history search column not yet written, in order (the row writer's next write takes them). */
  searchPending: string[];
}

const knownStatuses: ReadonlySet<string> = new Set([...liveSessionStatuses, ...endedSessionStatuses]);
/** Commands remembered per session for retries; older ones are answered from the log. */
export const maxRememberedCommands = 1_000;

export function newEntry(
  row: SessionRow,
  workspace: WorkspaceAccess["workspace"],
  init: { fresh: boolean; lastSeq: number; costUsd: number; conversationStarted: boolean },
): SessionEntry {
  // A loaded session has no child of this sidecar: a row that claims a live one is stale.
  const stale = !knownStatuses.has(row.status) || (!init.fresh && isLiveSessionStatus(row.status));
  const status = stale ? "stopped" : (row.status as SessionStatus);
  return {
    id: row.id,
    workspace,
    worktreePath: row.worktreePath,
    claudeSessionId: row.claudeSessionId ?? row.id,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    title: row.title,
    status,
    mode: row.mode,
    model: row.model,
    pid: null,
    costUsd: init.costUsd,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    countedResults: new Set(),
    conversationStarted: init.conversationStarted,
    runner: undefined,
    runnerAllowsBypass: workspace.allowBypass,
    runnerStarting: undefined,
    detachRunner: undefined,
    commands: new CommandMemo(maxRememberedCommands),
    captures: new Set(),
    lastNotifiedSeq: init.lastSeq,
    tail: Promise.resolve(),
    rowDirty: false,
    rowWriting: undefined,
    rowFlush: undefined,
    rowWritten: undefined,
    cost: createCostState(),
    lastExit: null,
    promptSenders: new Map(),
    costChain: Promise.resolve(),
    maxBudgetUsd: row.maxBudgetUsd,
    searchPending: [],
  };
}

export function viewOf(entry: SessionEntry): SessionView {
  return {
    id: entry.id,
    workspaceId: entry.workspace.id,
    workspaceSlug: entry.workspace.slug,
    title: entry.title,
    status: entry.status,
    mode: entry.mode,
    model: entry.model,
    createdBy: entry.createdBy,
    createdAt: entry.createdAt.toISOString(),
    lastSeq: entry.lastNotifiedSeq,
    costUsd: entry.costUsd,
    tokens: { ...entry.tokens },
    bypassAvailable: entry.workspace.allowBypass && (entry.runner === undefined || entry.runnerAllowsBypass),
  };
}

export function snapshotSessionOf(entry: SessionEntry): SnapshotSession {
  const { repoKey, root } = changeRootOf({
    sessionId: entry.id,
    workspaceId: entry.workspace.id,
    rootPath: entry.workspace.rootPath,
    worktreePath: entry.worktreePath,
  });
  return { sessionId: entry.id, workspaceId: entry.workspace.id, workspaceRoot: entry.workspace.rootPath, rootPath: root, repoKey };
}

export function assertNotDead(entry: SessionEntry): void {
  const status = entry.runner?.state.status ?? entry.status;
  if (status === "dead") {
    throw new AppError(
      ErrorCode.conflict,
      "This session has ended and takes no more prompts (its last notice says why). Start a new session.",
    );
  }
}

export function shuttingDown(): AppError {
  return new AppError(ErrorCode.unavailable, "The sidecar is shutting down.");
}

export function bypassRefused(): AppError {
  return new AppError(
    ErrorCode.forbidden,
    "bypassPermissions is not enabled for this workspace; an owner can allow it in the workspace settings.",
  );
}

export function reusedCommandId(): AppError {
  return new AppError(ErrorCode.conflict, "This commandId was already used for a different command.");
}

export function asAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const message = err instanceof Error && err.message ? err.message : "The CLI refused the request.";
  return new AppError(ErrorCode.cliError, message);
}

export function safeParse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
