/**
 * A new session's own git worktree, made before its first spawn and stored on its row
 * (`worktreePath`, `worktreeBranch`, `baseBranch`). A workspace that cannot have one (not a
 * repository, no commit yet) refuses the whole creation: the row just inserted is removed,
 * so no session is left that would run somewhere its creator did not ask for. The worktree is
 * made and removed by the workspace's git door (`server/workspace-agent`).
 */
import { workspaceDoorScope } from "@/server/db/door-scopes";
import type { Db } from "@/server/db/client";
import { workspaceDoor, type DoorScope } from "@/server/workspace-agent";

/** The git door of a workspace, minus other workspaces nested inside it (as the web app's git routes scope it). */
function gitScopeOf(db: Db, ws: { id: string; rootPath: string }): Promise<DoorScope> {
  return workspaceDoorScope(db, ws, "git");
}

/** Creates the worktree of session `sessionId` in the workspace at `rootPath`; returns its path. */
export async function attachSessionWorktree(db: Db, sessionId: string, rootPath: string): Promise<string> {
  let worktree;
  try {
    const row = await db.session.findUniqueOrThrow({ where: { id: sessionId }, select: { workspaceId: true } });
    worktree = await workspaceDoor().call(await gitScopeOf(db, { id: row.workspaceId, rootPath }), "git.worktree.create", { sessionId });
  } catch (err) {
    await db.session.delete({ where: { id: sessionId } }).catch(() => undefined);
    throw err;
  }
  await db.session.update({
    where: { id: sessionId },
    data: { worktreePath: worktree.path, worktreeBranch: worktree.branch, baseBranch: worktree.baseBranch },
  });
  return worktree.path;
}

/** The sidecar's twin of the web app's `releaseSessionWorktree`: removes an open worktree and marks it closed. */
export async function releaseSessionWorktree(db: Db, sessionId: string): Promise<void> {
  const row = await db.session.findUnique({
    where: { id: sessionId },
    select: { worktreePath: true, worktreeBranch: true, worktreeClosedAt: true, workspace: { select: { id: true, rootPath: true } } },
  });
  if (!row?.worktreePath || !row.worktreeBranch || row.worktreeClosedAt) return;
  await workspaceDoor().call(await gitScopeOf(db, row.workspace), "git.worktree.remove", { wt: { path: row.worktreePath, branch: row.worktreeBranch } });
  await db.session.update({ where: { id: sessionId }, data: { worktreeClosedAt: new Date() } });
}
