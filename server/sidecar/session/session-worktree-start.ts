/**
 * A new session's own git worktree, made before its first spawn and stored on its row
 * (`worktreePath`, `worktreeBranch`, `baseBranch`). A workspace that cannot have one (not a
 * repository, no commit yet) refuses the whole creation: the row just inserted is removed,
 * so no session is left that would run somewhere its creator did not ask for.
 */
import type { Db } from "@/server/db/client";
import { createSessionWorktree, removeSessionWorktree } from "@/server/workspace-git/session-worktree";

/** Creates the worktree of session `sessionId` in the workspace at `rootPath`; returns its path. */
export async function attachSessionWorktree(db: Db, sessionId: string, rootPath: string): Promise<string> {
  let worktree;
  try {
    worktree = await createSessionWorktree({ root: rootPath }, sessionId);
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
    select: { worktreePath: true, worktreeBranch: true, worktreeClosedAt: true, workspace: { select: { rootPath: true } } },
  });
  if (!row?.worktreePath || !row.worktreeBranch || row.worktreeClosedAt) return;
  await removeSessionWorktree({ root: row.workspace.rootPath }, { path: row.worktreePath, branch: row.worktreeBranch });
  await db.session.update({ where: { id: sessionId }, data: { worktreeClosedAt: new Date() } });
}
