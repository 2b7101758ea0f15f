/**
 * Git for people: membership and role checks, then the workspace's git door
 * (`server/workspace-agent`: `server/workspace-git` run in a process sandboxed to the workspace). Members read the
 * status and diffs; owners and editors commit and discard (audited `git.commit`, `git.discard`,
 * objectType `git`); a session's worktree is merged back or discarded by owners only (audited
 * `git.worktree.merge`, `git.worktree.discard`, objectType `session`).
 */
import { workspaceDoorScope } from "@/server/db/door-scopes";
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { GitCommitResult, GitFileDiff, GitStatus, WorktreeView } from "@/server/shared/wire/git";
import {

  maxCommitPaths,
  maxRelativePathLength,
  workspaceDoor,
  WorktreeConflictError,
  type DiscardResult,
  type DoorScope,
  type SessionWorktree,
} from "@/server/workspace-agent";
import { errorResponse } from "@/server/web/http";
import { requireWorkspaceAccess, type WorkspaceSummary } from "@/server/web/workspaces";
import { isLiveSessionStatus } from "@/server/shared/wire/session";

const ZPath = z.string().min(1, "name a file").max(maxRelativePathLength);

export const ZDiffQuery = z.object({ path: ZPath, orig: ZPath.optional() });
/** An empty message or selection is let through to the service, which answers 409 saying so. */
export const ZCommitInput = z.object({ paths: z.array(ZPath).max(maxCommitPaths), message: z.string().max(10_000) });
export const ZDiscardInput = z.object({ path: ZPath, confirmDelete: z.boolean().default(false) });
export const ZMergeInput = z.object({ strategy: z.enum(["merge", "rebase"]).default("merge") });
export const ZWorktreeDiffQuery = z.object({ path: ZPath });

/** The person acting, as git will name them. */
export interface GitActor {
  id: string;
  name: string;
  email: string;
}

/** The git door of the workspace's directory, minus other workspaces nested inside it. */
function rootOf(ws: Pick<WorkspaceSummary, "id" | "rootPath">): Promise<DoorScope> {
  return workspaceDoorScope(getDb(), ws, "git");
}

async function audit(actorId: string, workspaceId: string, action: string, objectType: string, objectId: string, details: object): Promise<void> {
  await getDb().auditLog.create({ data: { actorId, action, objectType, objectId, workspaceId, details: JSON.stringify(details) } });
}

export async function getGitStatus(userId: string, slug: string): Promise<GitStatus> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return workspaceDoor().call(await rootOf(ws), "git.status", {});
}

/** Whether the workspace is a repository Conduit runs git in (the new-session form offers a worktree then). */
export async function isGitWorkspace(userId: string, slug: string): Promise<boolean> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return workspaceDoor().call(await rootOf(ws), "git.isRepository", {});
}

export async function getGitDiff(userId: string, slug: string, query: z.infer<typeof ZDiffQuery>): Promise<GitFileDiff> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  return workspaceDoor().call(await rootOf(ws), "git.diff", query.orig === undefined ? { path: query.path } : { path: query.path, orig: query.orig });
}

export async function commitGit(actor: GitActor, slug: string, input: z.infer<typeof ZCommitInput>): Promise<GitCommitResult> {
  const ws = await requireWorkspaceAccess(actor.id, slug, "steer");
  const result = await workspaceDoor().call(await rootOf(ws), "git.commit", { paths: input.paths, message: input.message, author: { name: actor.name, email: actor.email } });
  await audit(actor.id, ws.id, "git.commit", "git", result.commit, { branch: result.branch, paths: result.paths, message: input.message.trim().slice(0, 500) });
  return result;
}

export async function discardGit(actor: GitActor, slug: string, input: z.infer<typeof ZDiscardInput>): Promise<DiscardResult> {
  const ws = await requireWorkspaceAccess(actor.id, slug, "steer");
  const result = await workspaceDoor().call(await rootOf(ws), "git.discard", { path: input.path, confirmDelete: input.confirmDelete });
  await audit(actor.id, ws.id, "git.discard", "git", result.path, { action: result.action });
  return result;
}

/** The session (of this workspace) and its worktree columns; another workspace's session is not found. */
async function sessionWorktreeOf(ws: WorkspaceSummary, sessionId: string) {
  const row = await getDb().session.findFirst({
    where: { id: sessionId, workspaceId: ws.id },
    select: { id: true, status: true, worktreePath: true, worktreeBranch: true, baseBranch: true, worktreeClosedAt: true },
  });
  if (!row) throw new AppError(ErrorCode.notFound, "No such session in this workspace.");
  const wt: SessionWorktree | undefined =
    row.worktreePath && row.worktreeBranch && row.baseBranch ? { path: row.worktreePath, branch: row.worktreeBranch, baseBranch: row.baseBranch } : undefined;
  return { row, wt };
}

function openWorktreeOf(wt: SessionWorktree | undefined, closedAt: Date | null): SessionWorktree {
  if (!wt) throw new AppError(ErrorCode.conflict, "This session does not run in its own worktree.");
  if (closedAt) throw new AppError(ErrorCode.conflict, "This session's worktree was discarded.");
  return wt;
}

/** The session's worktree and what its branch changed; null for a session without one. */
export async function getSessionWorktree(userId: string, slug: string, sessionId: string): Promise<WorktreeView | null> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const { row, wt } = await sessionWorktreeOf(ws, sessionId);
  if (!wt) return null;
  const changes = row.worktreeClosedAt ? [] : await workspaceDoor().call(await rootOf(ws), "git.worktree.changes", { wt });
  return { sessionId: row.id, path: wt.path, branch: wt.branch, baseBranch: wt.baseBranch, closedAt: row.worktreeClosedAt?.toISOString() ?? null, changes };
}

export async function getSessionWorktreeDiff(userId: string, slug: string, sessionId: string, rel: string): Promise<GitFileDiff> {
  const ws = await requireWorkspaceAccess(userId, slug, "read");
  const { row, wt } = await sessionWorktreeOf(ws, sessionId);
  return workspaceDoor().call(await rootOf(ws), "git.worktree.diff", { wt: openWorktreeOf(wt, row.worktreeClosedAt), path: rel });
}

export async function mergeSessionWorktreeBack(actor: GitActor, slug: string, sessionId: string, input: z.infer<typeof ZMergeInput>) {
  const ws = await requireWorkspaceAccess(actor.id, slug, "manageSettings");
  const { row, wt } = await sessionWorktreeOf(ws, sessionId);
  const open = openWorktreeOf(wt, row.worktreeClosedAt);
  try {
    const merged = await workspaceDoor().call(await rootOf(ws), "git.worktree.merge", { wt: open, strategy: input.strategy, who: { name: actor.name, email: actor.email }, sessionId });
    await audit(actor.id, ws.id, "git.worktree.merge", "session", sessionId, { branch: open.branch, into: open.baseBranch, strategy: merged.strategy, commit: merged.commit });
    return merged;
  } catch (err) {
    if (err instanceof WorktreeConflictError) {
      await audit(actor.id, ws.id, "git.worktree.merge", "session", sessionId, { branch: open.branch, into: open.baseBranch, strategy: input.strategy, aborted: true, conflicts: err.conflicts.slice(0, 50) });
    }
    throw err;
  }
}

/** Removes the session's worktree and branch (owners; the session must not be running in it). */
export async function discardSessionWorktree(actor: GitActor, slug: string, sessionId: string): Promise<{ sessionId: string; branch: string }> {
  const ws = await requireWorkspaceAccess(actor.id, slug, "manageSettings");
  const { row, wt } = await sessionWorktreeOf(ws, sessionId);
  const open = openWorktreeOf(wt, row.worktreeClosedAt);
  if (isLiveSessionStatus(row.status)) throw new AppError(ErrorCode.conflict, "The session is still running in its worktree: stop it first.");
  await workspaceDoor().call(await rootOf(ws), "git.worktree.remove", { wt: { path: open.path, branch: open.branch } });
  await getDb().session.update({ where: { id: sessionId }, data: { worktreeClosedAt: new Date() } });
  await audit(actor.id, ws.id, "git.worktree.discard", "session", sessionId, { branch: open.branch });
  return { sessionId, branch: open.branch };
}

/** A merge that stopped on conflicts answers 409 with the files; anything else goes to the common funnel. */
export function gitErrorResponse(err: unknown): Response {
  if (err instanceof WorktreeConflictError) {
    return Response.json({ error: { code: err.code, message: err.message, conflicts: err.conflicts } }, { status: 409 });
  }
  return errorResponse(err);
}

/**
 * For the session-delete (and archive) code: removes the session's worktree and branch if it
 * has one still open, and marks it closed. The caller has already checked the person's right;
 * a session without a worktree is a no-op. Call before deleting the row (the row names the path).
 */
export async function releaseSessionWorktree(sessionId: string): Promise<void> {
  const row = await getDb().session.findUnique({
    where: { id: sessionId },
    select: { worktreePath: true, worktreeBranch: true, worktreeClosedAt: true, workspace: { select: { id: true, rootPath: true } } },
  });
  if (!row?.worktreePath || !row.worktreeBranch || row.worktreeClosedAt) return;
  await workspaceDoor().call(await rootOf(row.workspace), "git.worktree.remove", { wt: { path: row.worktreePath, branch: row.worktreeBranch } });
  await getDb().session.update({ where: { id: sessionId }, data: { worktreeClosedAt: new Date() } });
}
