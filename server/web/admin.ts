/**
 * The admin area's gate: administrators only. A signed-in person who is not an administrator is
 * told there is nothing here (404), so the area is not advertised; a signed-out client is asked
 * to sign in (401, and pages go to the sign-in page), as everywhere else in Conduit.
 */
import { notFound } from "next/navigation";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { findCurrentUser, requireCurrentUser, type CurrentUser } from "@/server/web/auth";

/** For route handlers: the signed-in administrator; `unauthorized` signed out, `not_found` for anyone else. */
export async function requireAdmin(): Promise<CurrentUser> {
  const user = await requireCurrentUser();
  if (!user.isAdmin) throw new AppError(ErrorCode.notFound, "Not found.");
  return user;
}

/** For pages (inside the IDE layout, which sends signed-out visitors to sign-in): the administrator, or the 404 page. */
export async function requireAdminPage(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user?.isAdmin) notFound();
  return user;
}
