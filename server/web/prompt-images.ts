/**
 * The images people pasted into a session's prompts, for the members of its workspace (the
 * conversation and the history show them). Another workspace's session, or an image of
 * another session, is not_found.
 */
import { getDb } from "@/server/db/client";
import { findPromptImage } from "@/server/db/prompt-images";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { requireWorkspaceAccess } from "@/server/web/workspaces";

const servable = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export async function readPromptImage(
  userId: string,
  slug: string,
  sessionId: string,
  imageId: string,
): Promise<{ mediaType: string; data: Uint8Array }> {
  const workspace = await requireWorkspaceAccess(userId, slug, "read");
  const db = getDb();
  const session = await db.session.findFirst({ where: { id: sessionId, workspaceId: workspace.id }, select: { id: true } });
  if (!session) throw new AppError(ErrorCode.notFound, "No such session.");
  const image = await findPromptImage(db, session.id, imageId);
  if (!image || !servable.has(image.mediaType)) throw new AppError(ErrorCode.notFound, "No such image in this session.");
  return image;
}
