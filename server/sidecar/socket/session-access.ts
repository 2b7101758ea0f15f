/**
 * The role check every session command shares: the caller's access to the session when they may
 * do `action` in it. Non-members learn nothing (the same not_found as a missing session); members
 * whose role is too low get forbidden with `refused`, which says what they cannot do.
 */
import type { Db } from "@/server/db/client";
import { findSessionAccess, type SessionAccess } from "@/server/db/sessions";
import { canPerform, parseRole, type Role, type WorkspaceAction } from "@/server/domain/workspace/roles";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";

export const sessionNotFound = "No such session, or you are not a member of its workspace.";

export async function authorizeSession(
  db: Db,
  userId: string,
  sessionId: string,
  action: WorkspaceAction,
  refused: string,
): Promise<SessionAccess & { role: Role }> {
  const access = await findSessionAccess(db, userId, sessionId);
  const role = access?.role === undefined ? undefined : parseRole(access.role);
  if (!access || !role || !canPerform(role, "read")) throw new AppError(ErrorCode.notFound, sessionNotFound);
  if (!canPerform(role, action)) throw new AppError(ErrorCode.forbidden, refused);
  return { ...access, role };
}
