/**
 * Which pair of snapshots a scope means: one turn (its before and after), or the whole session
 * (the earliest before to the latest after, take-backs included, so reverted work drops out).
 */
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ChangeScope } from "@/server/shared/wire/changes";

/** What a scope needs of a stored step. */
export interface ScopeStep {
  id: string;
  kind: string;
  promptSeq: number | null;
  beforeCommit: string | null;
  afterCommit: string | null;
  status: string;
}

/** The commits of `scope`, or a clear error when its changes are not known. */
export function commitsOfScope(steps: readonly ScopeStep[], scope: ChangeScope): { before: string; after: string } {
  if ("turn" in scope) {
    const step = steps.find((s) => s.id === scope.turn);
    if (!step) throw new AppError(ErrorCode.notFound, "This session has no such turn.");
    if (step.status !== "ok" || !step.beforeCommit || !step.afterCommit) {
      throw new AppError(ErrorCode.conflict, "This turn's changes are unknown (a snapshot failed).");
    }
    return { before: step.beforeCommit, after: step.afterCommit };
  }
  const whole = sessionCommits(steps);
  if (!whole) throw new AppError(ErrorCode.notFound, "This session has not changed any files yet.");
  return whole;
}

/** The earliest before and the latest after of a session's steps, when both are known. */
export function sessionCommits(steps: readonly ScopeStep[]): { before: string; after: string } | undefined {
  const first = steps.find((s) => s.beforeCommit !== null);
  const last = [...steps].reverse().find((s) => s.afterCommit !== null);
  if (!first?.beforeCommit || !last?.afterCommit) return undefined;
  return { before: first.beforeCommit, after: last.afterCommit };
}

/**
 * The snapshot a rewind to "before prompt `promptSeq`" restores: the before of the turn that
 * prompt started, else of the turn it joined (the latest turn started at or before it).
 */
export function rewindTarget(steps: readonly ScopeStep[], promptSeq: number): string {
  let target: ScopeStep | undefined;
  for (const step of steps) {
    if (step.kind !== "turn" || step.promptSeq === null || step.promptSeq > promptSeq) continue;
    if (!target || (target.promptSeq ?? 0) <= step.promptSeq) target = step;
  }
  // An unknown before is never replaced by an earlier one: that would take back more than asked.
  if (!target?.beforeCommit) {
    throw new AppError(ErrorCode.notFound, "There is no snapshot from before this prompt (it was sent before Conduit recorded changes, or its snapshot failed).");
  }
  return target.beforeCommit;
}

/**
 * Which shadow repository and work tree hold a session's changes: the workspace's, or, for a
 * session in its own git worktree (`Session.worktreePath`), one of the worktree's own (the
 * workspace's snapshots skip `.conduit`, where worktrees live). The repository's key names its
 * folder in the workspace's shadow folder (`<repoKey>.git`).
 */
export function changeRootOf(session: { sessionId: string; workspaceId: string; rootPath: string; worktreePath?: string | null }): {
  repoKey: string;
  root: string;
} {
  if (!session.worktreePath) return { repoKey: session.workspaceId, root: session.rootPath };
  return { repoKey: `${session.workspaceId}-wt-${session.sessionId}`, root: session.worktreePath };
}
