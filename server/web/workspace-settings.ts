/**
 * Workspace trust for the workspace's own Claude settings (`.claude/settings*.json`, `.mcp.json`):
 * an owner reviews what they would add and trusts exactly those contents (their digest). The
 * sidecar loads them only while the files still have that digest, so a session or a teammate who
 * changes them afterwards gets nothing until an owner looks again.
 */
import { getDb } from "@/server/db/client";
import { reviewWorkspaceSettings, type WorkspaceSettingsReview } from "@/server/domain/workspace/workspace-settings";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { workspaceFilesScope } from "@/server/web/workspace-files";
import { requireWorkspaceAccess, type WorkspaceSummary } from "@/server/web/workspaces";
import { workspaceDoor } from "@/server/workspace-agent";

/** What trusting the workspace's files would add, read by its files door (a missing directory adds nothing). */
async function reviewSettingsOf(ws: WorkspaceSummary): Promise<WorkspaceSettingsReview> {
  let scope;
  try {
    scope = await workspaceFilesScope(ws);
  } catch (err) {
    if (err instanceof AppError && err.code === ErrorCode.notFound) return reviewWorkspaceSettings({}, {});
    throw err;
  }
  return workspaceDoor().call(scope, "settings.review", {});
}

/** The review, and whether the files as they are now are the ones an owner trusted. */
export interface SettingsReviewView extends WorkspaceSettingsReview {
  trusted: boolean;
}

async function storedDigest(workspaceId: string): Promise<string | null> {
  const ws = await getDb().workspace.findUnique({ where: { id: workspaceId }, select: { trustedSettingsDigest: true } });
  return ws?.trustedSettingsDigest ?? null;
}

/** What the files would add and whether they are trusted now (owners only). */
export async function readSettingsReview(userId: string, slug: string): Promise<SettingsReviewView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const review = await reviewSettingsOf(ws);
  const digest = await storedDigest(ws.id);
  return { ...review, trusted: digest !== null && digest === review.digest && review.files.every((f) => !f.problem) };
}

/**
 * Trusts the files as the owner reviewed them: `digest` must be the digest of the files now, so a
 * change between the review and the click is refused rather than trusted unseen.
 */
export async function trustWorkspaceSettings(userId: string, slug: string, digest: string): Promise<SettingsReviewView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const review = await reviewSettingsOf(ws);
  if (review.digest !== digest) {
    throw new AppError(ErrorCode.conflict, "The settings files changed since you reviewed them. Review them again before trusting.");
  }
  if (review.files.some((f) => f.problem)) {
    throw new AppError(ErrorCode.invalidPayload, "A settings file could not be read as a regular file inside the workspace; it cannot be trusted.");
  }
  const db = getDb();
  await db.workspace.update({ where: { id: ws.id }, data: { trustedSettingsDigest: digest } });
  await db.auditLog.create({
    data: { actorId: userId, action: "workspace.settings.trust", objectType: "workspace", objectId: ws.id, workspaceId: ws.id, details: JSON.stringify({ digest }) },
  });
  return { ...review, trusted: true };
}

/** Stops trusting the workspace's settings: new CLI processes run without them again. */
export async function untrustWorkspaceSettings(userId: string, slug: string): Promise<SettingsReviewView> {
  const ws = await requireWorkspaceAccess(userId, slug, "manageSettings");
  const db = getDb();
  await db.workspace.update({ where: { id: ws.id }, data: { trustedSettingsDigest: null } });
  await db.auditLog.create({ data: { actorId: userId, action: "workspace.settings.untrust", objectType: "workspace", objectId: ws.id, workspaceId: ws.id } });
  return { ...(await reviewSettingsOf(ws)), trusted: false };
}
