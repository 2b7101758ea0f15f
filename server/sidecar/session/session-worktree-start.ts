/**
 * A new session's own git worktree, made before its first spawn and stored on its row
 * (`worktreePath`, `worktreeBranch`, `baseBranch`). A workspace that cannot have one (not a
 * repository, no commit yet) refuses the whole creation: the row just inserted is removed,
 * so no session is left that would run somewhere its creator did not ask for.
 */
import type { Db } from "@/server/db/client";
import { createSessionWorktree } from "@/server/workspace-git/session-worktree";

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
