/**
 * A session's file changes for people (issue 12): the steps the sidecar recorded (TurnChange
 * rows) per turn and for the whole session, and one file's before and after for a diff, read
 * from the workspace's shadow repository through the workspace's files door
 * (`server/workspace-agent/ops/changes.ts`; reads only, the sidecar's door alone writes it).
 * Members read; taking changes back is the sidecar's (socket commands).
 */
import { z } from "zod";
import { getDb } from "@/server/db/client";
import { listTurnChanges } from "@/server/db/turn-changes";
import { canPerform } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import type { ChangeScope, FileChangeDiff, SessionChanges, TurnChangeView } from "@/server/shared/wire/changes";
import {
  changeRootOf,
  commitsOfScope,
  filesScope,
  hunksOf,
  maxRelativePathLength,
  parseRelativePath,
  sessionCommits,
  workspaceDoor,
  type DoorScope,
} from "@/server/workspace-agent";
import { requireWorkspaceAccess, type WorkspaceSummary } from "@/server/web/workspaces";

export const ZFileChangeQuery = z
  .object({
    path: z.string().min(1).max(maxRelativePathLength),
    turn: z.string().min(1).max(64).optional(),
    session: z.enum(["1", "true"]).optional(),
  })
  .refine((q) => (q.turn === undefined) !== (q.session === undefined), "name either a turn or the whole session (session=1)");

/** The workspace, with where the session's changes live (its own worktree's shadow repository, if it has one). */
async function sessionOf(
  userId: string,
  slug: string,
  sessionId: string,
): Promise<WorkspaceSummary & { changes: { repoKey: string; root: string } }> {
  const workspace = await requireWorkspaceAccess(userId, slug, "read");
  const found = await getDb().session.findFirst({
    where: { id: sessionId, workspaceId: workspace.id },
    select: { id: true, worktreePath: true },
  });
  if (!found) throw new AppError(ErrorCode.notFound, "No such session.");
  const changes = changeRootOf({ sessionId, workspaceId: workspace.id, rootPath: workspace.rootPath, worktreePath: found.worktreePath });
  return { ...workspace, changes };
}

/** The workspace's files door, and the session's repository as its operations name it (reads need no work tree). */
async function repoOf(workspace: WorkspaceSummary & { changes: { repoKey: string } }): Promise<{ scope: DoorScope; repo: { repoKey: string } }> {
  const scope = await filesScope({ id: workspace.id, rootPath: workspace.rootPath });
  return { scope, repo: { repoKey: workspace.changes.repoKey } };
}

/** Every step of the session's changes, and the whole session's files (first before → latest after). */
export async function readSessionChanges(userId: string, slug: string, sessionId: string): Promise<SessionChanges> {
  const workspace = await sessionOf(userId, slug, sessionId);
  const steps = await listTurnChanges(getDb(), sessionId);
  const turns: TurnChangeView[] = steps.map((s) => ({
    id: s.id,
    kind: s.kind,
    promptSeq: s.promptSeq,
    status: s.status,
    files: s.files,
    createdAt: s.createdAt.toISOString(),
  }));
  const whole = sessionCommits(steps);
  let session: SessionChanges["session"] = { files: [], status: "none" };
  if (whole) {
    try {
      const { scope, repo } = await repoOf(workspace);
      const files = whole.before === whole.after ? [] : await workspaceDoor().call(scope, "changes.diff", { ...repo, from: whole.before, to: whole.after });
      session = { files, status: "ok" };
    } catch {
      session = { files: [], status: "unknown" };
    }
  } else if (steps.length > 0) {
    session = { files: [], status: "unknown" };
  }
  return { turns, session, canTakeBack: canPerform(workspace.role, "steer") };
}

/** A file before and after a turn (or the whole session), with the change's hunks. */
export async function readFileChange(
  userId: string,
  slug: string,
  sessionId: string,
  query: z.infer<typeof ZFileChangeQuery>,
): Promise<FileChangeDiff> {
  const workspace = await sessionOf(userId, slug, sessionId);
  const file = parseRelativePath(query.path);
  const scope: ChangeScope = query.turn !== undefined ? { turn: query.turn } : { session: true };
  const steps = await listTurnChanges(getDb(), sessionId);
  // nothing recorded yet: the file has no change to show (both sides absent)
  if ("session" in scope && !sessionCommits(steps)) return { path: file, before: { kind: "absent" }, after: { kind: "absent" }, hunks: [] };
  const { before, after } = commitsOfScope(steps, scope);
  const door = await repoOf(workspace);
  const sides = await workspaceDoor().call(door.scope, "changes.sides", { ...door.repo, before, after, file });
  return { path: file, before: sides.before, after: sides.after, hunks: hunksOf(sides.before, sides.after).hunks };
}
