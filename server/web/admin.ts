/**
 * The admin area's gate: administrators only; everyone else, signed in or not, is told there is
 * nothing here (404), so the area's existence is not advertised.
 */
import { notFound } from "next/navigation";
import { AppError, ErrorCode } from "@/server/shared/errors/app-error";
import { findCurrentUser, type CurrentUser } from "@/server/web/auth";

/** For route handlers: the signed-in administrator, or a `not_found` error. */
export async function requireAdmin(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user?.isAdmin) throw new AppError(ErrorCode.notFound, "Not found.");
  return user;
}

/** For pages: the signed-in administrator, or the 404 page. */
export async function requireAdminPage(): Promise<CurrentUser> {
  const user = await findCurrentUser();
  if (!user?.isAdmin) notFound();
  return user;
}
